package ratelimit

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkMemoryAllow measures one decision of the in-process limiter with
// many goroutines over 10,000 callers.
func BenchmarkMemoryAllow(b *testing.B) {
	m := NewMemory(MemoryOptions{})
	p := Policy{Name: "reads", Quota: 300, Window: time.Minute}
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = "principal:" + strconv.Itoa(i)
	}
	var n atomic.Uint64
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			if _, err := m.Allow(ctx, p, keys[i%uint64(len(keys))]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package ratelimit

import (
	"container/list"
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// DefaultMaxKeys bounds the keys a Memory limiter remembers.
const DefaultMaxKeys = 100_000

// Memory is an in-process limiter: one token bucket per (policy, key). Its
// memory is bounded: a key idle long enough for its bucket to refill is
// forgotten (a fresh bucket is the same thing), and when more than MaxKeys
// keys are active the least recently seen is forgotten first.
type Memory struct {
	now     func() time.Time
	maxKeys int

	mu      sync.Mutex
	entries map[memKey]*list.Element
	lru     *list.List // of *memEntry, most recently seen first
	evicted uint64
}

type memKey struct {
	policy Policy
	key    string
}

type memEntry struct {
	k    memKey
	lim  *rate.Limiter
	last time.Time
}

// MemoryOptions configures a Memory limiter.
type MemoryOptions struct {
	// Now is the clock; time.Now by default.
	Now func() time.Time
	// MaxKeys bounds the remembered keys; DefaultMaxKeys by default.
	MaxKeys int
}

// NewMemory returns an in-process limiter.
func NewMemory(opts MemoryOptions) *Memory {
	m := &Memory{now: opts.Now, maxKeys: opts.MaxKeys, entries: map[memKey]*list.Element{}, lru: list.New()}
	if m.now == nil {
		m.now = time.Now
	}
	if m.maxKeys <= 0 {
		m.maxKeys = DefaultMaxKeys
	}
	return m
}

// refillTime is how long an untouched bucket of p takes to fill completely.
func refillTime(p Policy) time.Duration { return p.Window }

// Allow spends one request of key's quota under p. It never fails.
func (m *Memory) Allow(_ context.Context, p Policy, key string) (Decision, error) {
	if !p.Enabled() {
		return Decision{Allowed: true, Remaining: math.MaxInt32}, nil
	}
	now := m.now()
	perSecond := float64(p.Quota) / p.Window.Seconds()

	m.mu.Lock()
	defer m.mu.Unlock()
	m.forgetIdle(now)
	k := memKey{policy: p, key: key}
	var e *memEntry
	if el, ok := m.entries[k]; ok {
		e = el.Value.(*memEntry)
		m.lru.MoveToFront(el)
	} else {
		e = &memEntry{k: k, lim: rate.NewLimiter(rate.Limit(perSecond), p.Quota)}
		m.entries[k] = m.lru.PushFront(e)
		for m.lru.Len() > m.maxKeys {
			m.remove(m.lru.Back())
			m.evicted++
		}
	}
	e.last = now

	allowed := e.lim.AllowN(now, 1)
	tokens := e.lim.TokensAt(now)
	d := Decision{
		Allowed:   allowed,
		Remaining: max(int(math.Floor(tokens)), 0),
		Reset:     seconds((float64(p.Quota) - tokens) / perSecond),
	}
	if !allowed {
		d.RetryAfter = seconds((1 - tokens) / perSecond)
	}
	return d, nil
}

// forgetIdle drops keys, least recently seen first, whose buckets have
// refilled: forgetting them changes no decision.
func (m *Memory) forgetIdle(now time.Time) {
	for el := m.lru.Back(); el != nil; el = m.lru.Back() {
		e := el.Value.(*memEntry)
		if now.Sub(e.last) < refillTime(e.k.policy) {
			return
		}
		m.remove(el)
	}
}

func (m *Memory) remove(el *list.Element) {
	e := el.Value.(*memEntry)
	delete(m.entries, e.k)
	m.lru.Remove(el)
}

// Len reports how many keys the limiter remembers.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lru.Len()
}

// Evicted reports how many active keys were forgotten because MaxKeys was
// reached (each got a fresh bucket).
func (m *Memory) Evicted() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.evicted
}

func seconds(s float64) time.Duration {
	if s <= 0 {
		return 0
	}
	return time.Duration(s * float64(time.Second))
}

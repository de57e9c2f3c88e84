package supply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"bokat"
	"bokat/internal/schedule"
)

// pipeStore is a Store whose transaction records the batches written and
// lets a test decide what each PutSupply does.
type pipeStore struct {
	put func(batch int, ps []bokat.ProviderSupply) error

	mu       sync.Mutex
	batches  int
	writing  bool // a PutSupply is running
	audited  bool
	rollback bool
}

func (s *pipeStore) InTx(ctx context.Context, fn func(Tx) error) error {
	err := fn(pipeTx{s})
	s.rollback = err != nil
	return err
}

type pipeTx struct{ s *pipeStore }

func (t pipeTx) PutSupply(ctx context.Context, ps []bokat.ProviderSupply, now time.Time) ([]Outcome, error) {
	t.s.mu.Lock()
	t.s.batches++
	n := t.s.batches
	t.s.writing = true
	t.s.mu.Unlock()
	defer func() {
		t.s.mu.Lock()
		t.s.writing = false
		t.s.mu.Unlock()
	}()
	if err := t.s.put(n, ps); err != nil {
		return nil, err
	}
	out := make([]Outcome, len(ps))
	for i := range out {
		out[i] = Created
	}
	return out, nil
}

func (t pipeTx) ManagedGroups(context.Context, []string) (map[string][]string, error) {
	return nil, nil
}

func (t pipeTx) AuditImport(context.Context, []string, string, map[string]string, time.Time) error {
	t.s.audited = true
	return nil
}

func (t pipeTx) ProviderSupply(context.Context, string) (bokat.ProviderSupply, error) {
	return bokat.ProviderSupply{}, bokat.ErrNotFound
}

// providers returns an each giving n providers, counting them in given, and
// calling after (when set) once provider i (1-based) has been taken.
func providers(n int, given *int, after func(i int) error) func(func(bokat.ProviderSupply) error) error {
	return func(fn func(bokat.ProviderSupply) error) error {
		for i := 1; i <= n; i++ {
			*given = i
			if err := fn(bokat.ProviderSupply{Provider: bokat.Provider{ID: fmt.Sprintf("prv_%05d", i)}}); err != nil {
				return err
			}
			if after != nil {
				if err := after(i); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

// goroutineID returns the id of the calling goroutine, from its stack's
// first line ("goroutine 7 [running]:").
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return string(bytes.Fields(buf)[1])
}

// TestImportReadsTheNextBatchWhileOneIsWritten: the first batch's write
// waits until the reading has taken all but the last provider of the
// second batch, which only a reading that goes on while a batch is written
// reaches (a write on the reading's own goroutine is refused rather than
// left waiting for ever).
func TestImportReadsTheNextBatchWhileOneIsWritten(t *testing.T) {
	const size = 10
	var (
		readerID   string
		secondRead = make(chan struct{})
		given      int
	)
	st := &pipeStore{put: func(batch int, ps []bokat.ProviderSupply) error {
		if batch != 1 {
			return nil
		}
		if goroutineID() == readerID {
			return errors.New("the batch is written on the reading's goroutine: reading waits for every write")
		}
		<-secondRead
		return nil
	}}
	each := providers(5*size/2, &given, func(i int) error {
		if i == 2*size-1 {
			close(secondRead)
		}
		return nil
	})
	res, err := importEach(context.Background(), st, "f.yaml", func(fn func(bokat.ProviderSupply) error) error {
		readerID = goroutineID()
		return each(fn)
	}, time.Now(), size, nil)
	if err != nil || len(res.Created) != 5*size/2 || st.batches != 3 || !st.audited {
		t.Fatalf("import: %v, %s in %d batches, audited %v", err, res, st.batches, st.audited)
	}
	for i, id := range res.Created {
		if want := fmt.Sprintf("prv_%05d", i+1); id != want {
			t.Fatalf("created[%d] = %s, want %s: the batches were written out of order", i, id, want)
		}
	}
}

// TestImportStopsReadingWhenAWriteFails: the reading gives up within the
// batch after the failed one, and the write's error is the import's.
func TestImportStopsReadingWhenAWriteFails(t *testing.T) {
	const size = 10
	var given int
	st := &pipeStore{put: func(batch int, ps []bokat.ProviderSupply) error {
		if batch == 2 {
			return errors.New("disk full")
		}
		return nil
	}}
	_, err := importEach(context.Background(), st, "f.yaml", providers(100*size, &given, nil), time.Now(), size, nil)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("import: %v, want the write's error", err)
	}
	if given > 4*size {
		t.Fatalf("the reading went on to provider %d after the write of batch 2 failed", given)
	}
	if st.audited || !st.rollback || st.writing {
		t.Fatalf("audited %v, rolled back %v, still writing %v", st.audited, st.rollback, st.writing)
	}
}

// TestImportOfAFailedReadingWaitsForTheWrite: a reading that fails (the
// file cannot be read further) ends the import with its error once the
// batch being written is done, and no further batch is written.
func TestImportOfAFailedReadingWaitsForTheWrite(t *testing.T) {
	const size = 10
	var given int
	release := make(chan struct{})
	st := &pipeStore{put: func(batch int, ps []bokat.ProviderSupply) error {
		<-release
		return nil
	}}
	changed := errors.New("read the supply file: input/output error")
	_, err := importEach(context.Background(), st, "f.yaml", providers(10*size, &given, func(i int) error {
		if i == size+size/2 {
			close(release)
			return changed
		}
		return nil
	}), time.Now(), size, nil)
	if !errors.Is(err, changed) {
		t.Fatalf("import: %v, want the reading's error", err)
	}
	if st.batches != 1 || st.writing || st.audited || !st.rollback {
		t.Fatalf("%d batches written, still writing %v, audited %v, rolled back %v", st.batches, st.writing, st.audited, st.rollback)
	}
}

// TestParseInstantReadsAStockholmMinuteWithoutTries: the common form of a
// blocked period's time ("2026-12-21T08:00") is read as the layouts read
// it, without allocating; other forms and invalid ones read as before.
func TestParseInstantReadsAStockholmMinuteWithoutTries(t *testing.T) {
	slow := func(s string) (time.Time, error) {
		for _, layout := range []string{"2006-01-02T15:04", "2006-01-02 15:04"} {
			if t, err := time.ParseInLocation(layout, s, schedule.Stockholm()); err == nil {
				return t, nil
			}
		}
		return time.Time{}, errors.New("not a Stockholm minute")
	}
	for _, s := range []string{"2026-12-21T08:00", "2026-12-21 23:59", "2026-03-29T02:30", "2026-10-25T02:30",
		"2028-02-29T10:00", "2026-01-31T00:00", "0001-01-01T00:00", "9999-12-31T23:59"} {
		want, err := slow(s)
		got, ok := parseStockholmMinute(s)
		if err != nil || !ok || !got.Equal(want) || got.Location() != want.Location() {
			t.Errorf("%q: got %v (%v), layouts read %v (%v)", s, got, ok, want, err)
		}
		if full, err := parseInstant(s, false); err != nil || !full.Equal(want) {
			t.Errorf("parseInstant(%q) = %v, %v", s, full, err)
		}
	}
	for _, s := range []string{"2026-02-29T10:00", "2026-13-01T10:00", "2026-00-01T10:00", "2026-12-32T10:00", "2026-12-00T10:00",
		"2026-12-21T24:00", "2026-12-21T08:60", "2026-12-21X08:00", "2026-12-21T8:00", "2026-12-21T08:0a", "+026-12-21T08:00",
		"2026-12-21T08:00Z", "2026-12-21", "2026-12-21T08:00:00"} {
		if _, ok := parseStockholmMinute(s); ok {
			t.Errorf("%q read as a Stockholm minute", s)
		}
		want, wantErr := parseInstantByLayout(strings.TrimSpace(s), false)
		got, err := parseInstant(s, false)
		if (err == nil) != (wantErr == nil) || !got.Equal(want) {
			t.Errorf("parseInstant(%q) = %v, %v; the layouts alone: %v, %v", s, got, err, want, wantErr)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = parseInstant("2026-12-21T08:00", false) }); n != 0 {
		t.Errorf("parseInstant of a Stockholm minute allocates %v times", n)
	}
}

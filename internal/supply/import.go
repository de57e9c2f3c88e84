package supply

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"bokat"
	"bokat/internal/catalog"
)

// Result says what an import did, by provider id.
type Result struct {
	Created, Updated, Unchanged []string
	// Kept names, per provider that manages some of its supply itself, the
	// field groups (GroupHours, ...) the import kept as stored instead of
	// taking the file's.
	Kept map[string][]string
}

// Changed reports whether the import wrote anything.
func (r Result) Changed() bool { return len(r.Created)+len(r.Updated) > 0 }

// String summarizes r: "16 providers: 2 created, 1 updated, 13 unchanged".
func (r Result) String() string {
	n := len(r.Created) + len(r.Updated) + len(r.Unchanged)
	out := fmt.Sprintf("%d providers: %d created, %d updated, %d unchanged", n, len(r.Created), len(r.Updated), len(r.Unchanged))
	for _, id := range slices.Sorted(maps.Keys(r.Kept)) {
		out += fmt.Sprintf("\n  %s manages its own %s: kept as stored, not taken from the file", id, strings.Join(r.Kept[id], ", "))
	}
	return out
}

// Import parses and validates a supply file and stores it in one
// transaction: each provider of the file, with its postcodes, services,
// hours and blocked periods, replaces what the store holds for that provider
// id. Providers the file does not name are left as they are (set
// `active: false` to withdraw one). A field group a provider manages itself
// (see Groups) is kept as stored, and Result.Kept says so. Nothing is written when the file has any
// problem; the error is then *Errors. Importing the same file twice changes
// nothing the second time.
func Import(ctx context.Context, st Store, cat *catalog.Catalog, name string, data []byte, now time.Time) (Result, error) {
	_, res, err := ImportStream(ctx, st, cat, name, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }, now, nil)
	return res, err
}

// ImportParsed is Import of providers already parsed (by Parse) from the
// file name.
func ImportParsed(ctx context.Context, st Store, name string, providers []bokat.ProviderSupply, now time.Time) (Result, error) {
	return importEach(ctx, st, name, listed(providers), now, importBatch, nil)
}

// listed gives the providers, in order, to fn, until fn's first error.
func listed(providers []bokat.ProviderSupply) func(func(bokat.ProviderSupply) error) error {
	return func(fn func(bokat.ProviderSupply) error) error {
		for _, p := range providers {
			if err := fn(p); err != nil {
				return err
			}
		}
		return nil
	}
}

// ImportStream is Import of the supply file that open opens, read once:
// its providers are parsed and checked as the file is read (several at a
// time), and stored a batch at a time, in the one transaction, while the
// next ones are read, so that neither its time nor its memory is that of
// reading the file twice. A file with any problem is read to its end, for
// every problem, and nothing of it is stored: the transaction is rolled
// back and the error is *Errors, as Parse's. ready, when not nil, is called
// once every provider is stored, before the transaction commits, with what
// was read (the calendars the file names, for instance); its error rolls
// the import back. A file not laid out to be read in parts (see scan) is
// read whole first.
func ImportStream(ctx context.Context, st Store, cat *catalog.Catalog, name string, open func() (io.ReadCloser, error), now time.Time,
	ready func(*File) error) (*File, Result, error) {
	return importStream(ctx, st, cat, name, open, now, ready, importBatch)
}

func importStream(ctx context.Context, st Store, cat *catalog.Catalog, name string, open func() (io.ReadCloser, error), now time.Time,
	ready func(*File) error, size int) (*File, Result, error) {
	var f *File
	done := func() error {
		if ready == nil {
			return nil
		}
		return ready(f)
	}
	res, err := importEach(ctx, st, name, func(fn func(bokat.ProviderSupply) error) error {
		f = &File{Name: name}
		r, err := open()
		if err != nil {
			return fmt.Errorf("read the supply file: %w", err)
		}
		defer r.Close()
		return scan(name, r, cat, func(p bokat.ProviderSupply) error {
			f.add(p)
			return fn(p)
		})
	}, now, size, done)
	if errors.Is(err, errWhole) {
		var providers []bokat.ProviderSupply
		if providers, err = readWhole(name, open, cat); err != nil {
			return nil, Result{}, err
		}
		f = &File{Name: name}
		for _, p := range providers {
			f.add(p)
		}
		res, err = importEach(ctx, st, name, listed(providers), now, size, done)
	}
	if perr := (*Errors)(nil); errors.As(err, &perr) {
		return nil, Result{}, perr
	}
	if err != nil {
		return nil, Result{}, err
	}
	return f, res, nil
}

// readWhole reads the file that open opens as one node tree (parseWhole).
func readWhole(name string, open func() (io.ReadCloser, error), cat *catalog.Catalog) ([]bokat.ProviderSupply, error) {
	r, err := open()
	if err != nil {
		return nil, fmt.Errorf("read the supply file: %w", err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read the supply file: %w", err)
	}
	return parseWhole(name, data, cat)
}

// importBatch is the number of providers an import reads from the store,
// and writes, at a time.
const importBatch = 1000

// importEach stores the providers each gives, in one transaction, size
// providers at a time. The batches are written by a goroutine of their own
// while each reads and decodes the next one: decoding is CPU, writing is
// mostly waiting on the database, and overlapped they take little more
// than the longer of the two. Reading runs at most one batch ahead of the
// one being written, so memory stays at two batches. A failed write stops
// the reading (each's fn returns the write's error); a failed reading
// (each's own error) waits for the batch being written, writes no further
// one and is returned: either way the transaction is rolled back and no
// goroutine is left behind. ready, when not nil, is called once every batch
// is written, before the commit; its error rolls the import back.
func importEach(ctx context.Context, st Store, name string, each func(func(bokat.ProviderSupply) error) error, now time.Time, size int,
	ready func() error) (Result, error) {
	var res Result
	err := st.InTx(ctx, func(tx Tx) error {
		res = Result{}
		w := startBatchWriter(ctx, tx, now, &res)
		batch := make([]bokat.ProviderSupply, 0, size)
		err := each(func(p bokat.ProviderSupply) error {
			if batch = append(batch, p); len(batch) < size {
				return nil
			}
			full := batch
			batch = make([]bokat.ProviderSupply, 0, size)
			return w.write(full)
		})
		if err == nil && len(batch) > 0 {
			err = w.write(batch)
		}
		if werr := w.close(); err == nil {
			err = werr
		}
		if err != nil {
			return err
		}
		if ready != nil {
			if err := ready(); err != nil {
				return err
			}
		}
		// A created provider's history starts with its row; a change of an
		// existing one is the operator's, recorded like a provider user's.
		notes := map[string]string{}
		for id, groups := range res.Kept {
			notes[id] = "kept=" + strings.Join(groups, ",")
		}
		return tx.AuditImport(ctx, res.Updated, name, notes, now)
	})
	if err != nil {
		return Result{}, fmt.Errorf("import %s: %w", name, err)
	}
	return res, nil
}

// batchWriter writes an import's batches (putBatch), in the order given,
// on a goroutine of its own: the only one to use the transaction, and to
// add to the result, until close returns.
type batchWriter struct {
	batches chan []bokat.ProviderSupply
	done    chan struct{} // closed when the goroutine has ended
	failed  chan struct{} // closed when a write has failed
	err     error         // the failed write's, read after failed or done
}

func startBatchWriter(ctx context.Context, tx Tx, now time.Time, res *Result) *batchWriter {
	w := &batchWriter{batches: make(chan []bokat.ProviderSupply), done: make(chan struct{}), failed: make(chan struct{})}
	go func() {
		defer close(w.done)
		for batch := range w.batches {
			if err := putBatch(ctx, tx, batch, now, res); err != nil {
				w.err = err
				close(w.failed) // write refuses the next batch from now on
				return
			}
		}
	}()
	return w
}

// write hands a batch to the writer once it has taken the one before, or
// returns the error of a write that failed.
func (w *batchWriter) write(batch []bokat.ProviderSupply) error {
	select {
	case w.batches <- batch:
		return nil
	case <-w.failed: // nothing takes batches any more
		return w.err
	}
}

// close waits for the batches handed to the writer to be written and
// returns the first write's error.
func (w *batchWriter) close() error {
	close(w.batches)
	<-w.done
	return w.err
}

// putBatch stores a batch of providers and adds what it did to res.
func putBatch(ctx context.Context, tx Tx, providers []bokat.ProviderSupply, now time.Time, res *Result) error {
	merged, kept, err := keepManaged(ctx, tx, providers)
	if err != nil {
		return err
	}
	for id, groups := range kept {
		if res.Kept == nil {
			res.Kept = map[string][]string{}
		}
		res.Kept[id] = groups
	}
	outcomes, err := tx.PutSupply(ctx, merged, now)
	if err != nil {
		return fmt.Errorf("store the providers: %w", err)
	}
	for i, outcome := range outcomes {
		id := providers[i].ID
		switch outcome {
		case Created:
			res.Created = append(res.Created, id)
		case Updated:
			res.Updated = append(res.Updated, id)
		default:
			res.Unchanged = append(res.Unchanged, id)
		}
	}
	return nil
}

// keepManaged returns the providers with each field group their stored
// provider manages replaced by the stored group, and the groups kept per
// provider. providers itself is not modified.
func keepManaged(ctx context.Context, tx Tx, providers []bokat.ProviderSupply) ([]bokat.ProviderSupply, map[string][]string, error) {
	ids := make([]string, len(providers))
	for i, p := range providers {
		ids[i] = p.ID
	}
	managed, err := tx.ManagedGroups(ctx, ids)
	if err != nil || len(managed) == 0 {
		return providers, nil, err
	}
	out := slices.Clone(providers)
	kept := map[string][]string{}
	for i, p := range out {
		groups := managed[p.ID]
		if len(groups) == 0 {
			continue
		}
		stored, err := tx.ProviderSupply(ctx, p.ID)
		if err != nil {
			return nil, nil, fmt.Errorf("read the stored supply of %s: %w", p.ID, err)
		}
		out[i] = KeepGroups(p, stored, groups)
		kept[p.ID] = groups
	}
	return out, kept, nil
}

// KeepGroups returns p with the field groups given taken from stored.
func KeepGroups(p, stored bokat.ProviderSupply, groups []string) bokat.ProviderSupply {
	for _, g := range groups {
		switch g {
		case GroupHours:
			p.Hours, p.MinNoticeMinutes, p.HorizonDays = stored.Hours, stored.MinNoticeMinutes, stored.HorizonDays
		case GroupPrices:
			p.Services = stored.Services
		case GroupPostcodes:
			p.Postcodes = stored.Postcodes
		case GroupBlocks:
			p.Blocked = stored.Blocked
		}
	}
	return p
}

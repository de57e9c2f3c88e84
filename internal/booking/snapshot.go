package booking

import (
	"context"
	"fmt"

	"bokat"
	"bokat/internal/schedule"
	"bokat/internal/sqlstore"
)

// snapshot is the supply at one revision, indexed for search. It is never
// modified once built.
type snapshot struct {
	revision int64
	// byService lists, per service id, the active providers offering it,
	// sorted by provider id.
	byService map[string][]*providerEntry
}

type providerEntry struct {
	supply bokat.ProviderSupply
	hours  schedule.WeeklyHours
}

func newSnapshot(s sqlstore.Supply) *snapshot {
	snap := &snapshot{revision: s.Revision, byService: map[string][]*providerEntry{}}
	for _, p := range s.Providers {
		if !p.Active {
			continue
		}
		e := &providerEntry{supply: p, hours: weeklyHours(p.Hours)}
		for _, svc := range p.Services {
			snap.byService[svc.ServiceID] = append(snap.byService[svc.ServiceID], e)
		}
	}
	return snap
}

func weeklyHours(hours []bokat.WorkingRange) schedule.WeeklyHours {
	var w schedule.WeeklyHours
	for _, h := range hours {
		w[h.Weekday] = append(w[h.Weekday], schedule.ClockRange{Start: h.StartMinute, End: h.EndMinute})
	}
	return w
}

// cachedSupply returns the supply snapshot last loaded, loading one when
// there is none. The caller checks it against the store's revision (see
// Search.Search) and calls reloadSupply when it is behind.
func (s *Search) cachedSupply(ctx context.Context) (*snapshot, error) {
	if snap := s.snap.Load(); snap != nil {
		return snap, nil
	}
	return s.reloadSupply(ctx, 0)
}

// reloadSupply loads the supply unless a snapshot at revision rev or later
// is already cached; concurrent callers share one load.
func (s *Search) reloadSupply(ctx context.Context, rev int64) (*snapshot, error) {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if snap := s.snap.Load(); snap != nil && snap.revision >= rev {
		return snap, nil
	}
	loaded, err := s.store.LoadSupply(ctx)
	if err != nil {
		return nil, fmt.Errorf("load the supply: %w", err)
	}
	snap := newSnapshot(loaded)
	s.snap.Store(snap)
	return snap, nil
}

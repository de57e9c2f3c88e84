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

// supply returns the supply snapshot at the store's current revision,
// loading it when the revision has moved on. Searches therefore see every
// committed supply change; each costs one small revision read.
func (s *Search) supply(ctx context.Context) (*snapshot, error) {
	rev, err := s.store.SupplyRevision(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the supply revision: %w", err)
	}
	if snap := s.snap.Load(); snap != nil && snap.revision >= rev {
		return snap, nil
	}
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

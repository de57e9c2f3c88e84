package catalog

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// checkReferences verifies, at every start, what the running server looks
// things up by: each supported vertical once, job type ids unique across
// the catalog, each seed naming a service and each service named by
// exactly one seed, every job type deciding its tax deduction with a
// source, and unavailable verticals distinct from supported ones.
// The content rules of the embedded file (labels, enums, prices, terms,
// capability texts) cannot change after the build; its tests check them.
func (c *Catalog) checkReferences() error {
	var errs []error
	addf := func(format string, args ...any) { errs = append(errs, fmt.Errorf("catalog: "+format, args...)) }

	supported := map[string]bool{}
	jobTypeVertical := map[string]string{}
	seeds := map[string]int{}
	for _, v := range c.Verticals {
		if supported[v.ID] {
			addf("vertical_id %q is given twice", v.ID)
		}
		supported[v.ID] = true
		for _, jt := range v.JobTypes {
			if other, dup := jobTypeVertical[jt.ID]; dup {
				addf("job_type_id %q is used in verticals %q and %q", jt.ID, other, v.ID)
			}
			jobTypeVertical[jt.ID] = v.ID
			if td := jt.TaxDeduction; !td.Kind.Valid() || td.BasisEN == "" || td.Source == "" {
				addf("job type %q: tax_deduction needs a kind (rot, rut or none), basis_en and source", jt.ID)
			}
			if jt.Seed != nil {
				seeds[jt.Seed.ServiceID]++
			}
		}
	}
	for _, id := range []string{VerticalVVS, VerticalElectrician, VerticalMoving, VerticalCleaning} {
		if !supported[id] {
			addf("supported vertical %q is missing", id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(seeds)) {
		if seeds[id] > 1 {
			addf("service_id %q is named by %d job types", id, seeds[id])
		}
		if _, ok := c.Services[id]; !ok {
			addf("seeded service_id %q has no service entry", id)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(c.Services)) {
		if seeds[id] == 0 {
			addf("service_id %q is named by no job type", id)
		}
	}
	for _, u := range c.UnavailableVerticals {
		if supported[u.ID] {
			addf("unavailable vertical_id %q is a supported vertical", u.ID)
		}
	}
	return errors.Join(errs...)
}

package catalog

import (
	"testing"

	"bokat/internal/taxdeduction"
)

// TestTaxDeductionPerJobType checks the catalog's decisions: plumbing and
// electrician work in the home gives ROT; home, window and move-out
// cleaning and moving give RUT; chargers, solar panels, inspections,
// premises and storage give none. Every job type decides, with a source.
func TestTaxDeductionPerJobType(t *testing.T) {
	t.Parallel()
	c := load(t)
	want := map[string]taxdeduction.Kind{
		"install_faucet":                   taxdeduction.ROT,
		"install_toilet":                   taxdeduction.ROT,
		"clog_fixture":                     taxdeduction.ROT,
		"leak_visible":                     taxdeduction.ROT,
		"electrical_replace_outlet_switch": taxdeduction.ROT,
		"electrical_install_ceiling_lamp":  taxdeduction.ROT,
		"electrical_install_spotlights":    taxdeduction.ROT,
		"electrical_service_visit":         taxdeduction.ROT,
		"electrical_install_ev_charger":    taxdeduction.None,
		"electrical_solar_pv":              taxdeduction.None,
		"electrical_inspection_safety":     taxdeduction.None,
		"cleaning_home_recurring":          taxdeduction.RUT,
		"cleaning_home_one_off":            taxdeduction.RUT,
		"cleaning_home_deep":               taxdeduction.RUT,
		"cleaning_window":                  taxdeduction.RUT,
		"cleaning_move_out":                taxdeduction.RUT,
		"cleaning_office_recurring":        taxdeduction.None,
		"cleaning_stairwell_property":      taxdeduction.None,
		"moving_home":                      taxdeduction.RUT,
		"moving_packing":                   taxdeduction.RUT,
		"moving_piano":                     taxdeduction.RUT,
		"moving_office":                    taxdeduction.None,
		"moving_storage":                   taxdeduction.None,
	}
	for _, v := range c.Verticals {
		for _, jt := range v.JobTypes {
			td := jt.TaxDeduction
			if !td.Kind.Valid() || td.BasisEN == "" || td.Source == "" {
				t.Errorf("%s: tax_deduction %+v is incomplete", jt.ID, td)
			}
			if v.ID == VerticalVVS && td.Kind != taxdeduction.ROT {
				t.Errorf("%s: plumbing in the home should give ROT, got %s", jt.ID, td.Kind)
			}
			if k, ok := want[jt.ID]; ok && td.Kind != k {
				t.Errorf("%s: tax_deduction kind = %s, want %s", jt.ID, td.Kind, k)
			}
			delete(want, jt.ID)
		}
	}
	for id := range want {
		t.Errorf("job type %s is not in the catalog", id)
	}
}

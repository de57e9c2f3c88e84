package catalog

import (
	"strings"
	"testing"
)

func TestCheckReferences(t *testing.T) {
	t.Parallel()
	if err := load(t).checkReferences(); err != nil {
		t.Fatalf("checkReferences of the embedded catalog: %v", err)
	}
	tests := []struct {
		name   string
		mutate func(*Catalog)
		want   string
	}{
		{"vertical missing", func(c *Catalog) { c.Verticals = c.Verticals[1:] }, `supported vertical "vvs" is missing`},
		{"vertical twice", func(c *Catalog) { c.Verticals = append(c.Verticals, c.Verticals[0]) }, `vertical_id "vvs" is given twice`},
		{"job type twice", func(c *Catalog) {
			c.Verticals[1].JobTypes = append(c.Verticals[1].JobTypes, JobType{ID: c.Verticals[0].JobTypes[0].ID})
		}, "is used in verticals"},
		{"seed without service", func(c *Catalog) { delete(c.Services, "moving_piano_standard_local") },
			`seeded service_id "moving_piano_standard_local" has no service entry`},
		{"service without seed", func(c *Catalog) { c.Services["orphan"] = Service{ID: "orphan"} },
			`service_id "orphan" is named by no job type`},
		{"tax deduction undecided", func(c *Catalog) { c.Verticals[2].JobTypes[0].TaxDeduction = TaxDeduction{} },
			`tax_deduction needs a kind`},
		{"tax deduction without source", func(c *Catalog) { c.Verticals[0].JobTypes[0].TaxDeduction.Source = "" },
			`tax_deduction needs a kind`},
		{"unavailable is supported", func(c *Catalog) { c.UnavailableVerticals[0].ID = "vvs" },
			`unavailable vertical_id "vvs" is a supported vertical`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := load(t)
			tt.mutate(c)
			err := c.checkReferences()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("checkReferences() = %v, want a problem containing %q", err, tt.want)
			}
		})
	}
}

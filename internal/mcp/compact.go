package mcp

import (
	"encoding/json"
	"time"
)

// CompactNote is the member "text_note" of a compact text.
const CompactNote = "Options are rows of option_columns; a provider's price, job_minutes and ROT/RUT estimate " +
	"hold for all its options. Slot labels, scope, terms and the estimate's conditions: structuredContent."

// optionColumns name the values of an option row of a compact text.
// The slot's label is left to structuredContent: start_at and the
// provider's job_minutes say the same time, and the ids are most of the
// text already.
var optionColumns = []string{"booking_option_id", "provider_id", "start_at"}

// compactText returns the text content of a success body. A model reads the
// text, and a search answer repeats its provider, service, scope and terms
// sections (several kilobytes) in every option. For a body with options
// the text keeps every other member as it is — the truth flags, the window
// and its not_understood words, next_available, the fallback, the safe next
// step — and gives each option as a row (optionColumns); each provider
// once, with the price and job length all its options share (a search
// prices one job), the service once with its terms version and url, and
// expires_at once. Scope and terms sections are left to structuredContent.
// A body that does not fit that form (options of several services, of
// differing expiry, or of one provider at differing prices or lengths) and
// any other body is its own text.
func compactText(body []byte) string {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return string(body)
	}
	var options []compactSource
	if raw, ok := top["options"]; !ok || json.Unmarshal(raw, &options) != nil || len(options) == 0 {
		return string(body)
	}
	first := options[0]
	providers := map[string]*compactProvider{}
	var taxTexts json.RawMessage
	rows := make([][]string, 0, len(options))
	for _, o := range options {
		length, ok := o.minutes()
		if !ok || o.ExpiresAt != first.ExpiresAt || o.Service.ServiceID != first.Service.ServiceID || o.Terms != first.Terms {
			return string(body)
		}
		estimate, texts, ok := splitEstimate(o.TaxReduction)
		if !ok || (texts != nil && taxTexts != nil && string(texts) != string(taxTexts)) {
			return string(body)
		}
		if texts != nil {
			taxTexts = texts
		}
		p := providers[o.Provider.ID]
		if p == nil {
			p = &compactProvider{Provider: o.Provider, Price: o.Price, Minutes: length, Estimate: estimate}
			providers[o.Provider.ID] = p
		} else if string(p.Price) != string(o.Price) || p.Minutes != length || string(p.Estimate) != string(estimate) {
			return string(body)
		}
		rows = append(rows, []string{o.ID, o.Provider.ID, o.Slot.StartAt})
	}
	var err error
	set := func(name string, v any) {
		if err == nil {
			top[name], err = json.Marshal(v)
		}
	}
	set("option_columns", optionColumns)
	set("options", rows)
	set("providers", providers)
	set("service", compactService{first.Service, first.Terms.Version, first.Terms.URL})
	set("expires_at", first.ExpiresAt)
	if taxTexts != nil {
		top["tax_reduction_texts"] = taxTexts
	}
	set("text_note", CompactNote)
	if err != nil {
		return string(body)
	}
	out, err := json.Marshal(top)
	if err != nil {
		return string(body)
	}
	return string(out)
}

// compactSource is what compactText reads of an option.
type compactSource struct {
	ID        string `json:"booking_option_id"`
	ExpiresAt string `json:"expires_at"`
	Provider  struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		City        string `json:"city,omitempty"`
		RatingLabel string `json:"rating_label,omitempty"`
	} `json:"provider"`
	Service struct {
		ServiceID  string `json:"service_id"`
		VerticalID string `json:"vertical_id"`
		JobTypeID  string `json:"job_type_id"`
		LabelSV    string `json:"label_sv"`
		LabelEN    string `json:"label_en,omitempty"`
	} `json:"service"`
	Slot struct {
		StartAt string `json:"start_at"`
		EndAt   string `json:"end_at"`
		Label   string `json:"label"`
	} `json:"slot"`
	Price json.RawMessage `json:"price"`
	Terms struct {
		Version string `json:"version"`
		URL     string `json:"url"`
	} `json:"terms"`
	TaxReduction json.RawMessage `json:"tax_reduction_estimate"`
}

// taxTextMembers are the members of a ROT/RUT estimate that are the same
// words for every option (its labels and conditions): a compact text
// gives them once, as tax_reduction_texts, the conditions by their ids
// only (condition_ids; the words are in structuredContent).
var taxTextMembers = []string{"label_sv", "label_en", "conditions"}

// splitEstimate splits an option's estimate into its figures and its
// texts; both nil when the option has none. ok is false for an estimate
// that is not a JSON object.
func splitEstimate(raw json.RawMessage) (figures, texts json.RawMessage, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, nil, false
	}
	t := map[string]json.RawMessage{}
	for _, k := range taxTextMembers {
		if v, has := m[k]; has {
			t[k] = v
			delete(m, k)
		}
	}
	if raw, has := t["conditions"]; has {
		var conditions []struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(raw, &conditions) != nil {
			return nil, nil, false
		}
		ids := make([]string, len(conditions))
		for i, c := range conditions {
			ids[i] = c.ID
		}
		delete(t, "conditions")
		t["condition_ids"], _ = json.Marshal(ids)
	}
	var err1, err2 error
	figures, err1 = json.Marshal(m)
	texts, err2 = json.Marshal(t)
	return figures, texts, err1 == nil && err2 == nil
}

// minutes is the option's job length in whole minutes.
func (o compactSource) minutes() (int, bool) {
	start, err1 := time.Parse(time.RFC3339, o.Slot.StartAt)
	end, err2 := time.Parse(time.RFC3339, o.Slot.EndAt)
	d := end.Sub(start)
	if err1 != nil || err2 != nil || d <= 0 || d%time.Minute != 0 {
		return 0, false
	}
	return int(d / time.Minute), true
}

// compactProvider is a provider of a compact text, with what all its
// options share.
type compactProvider struct {
	Provider any `json:"-"`
	// The provider's members, its price and the job's length with it.
	Price   json.RawMessage `json:"price"`
	Minutes int             `json:"job_minutes"`
	// Estimate is the figures of the options' ROT/RUT estimate, or nil.
	Estimate json.RawMessage `json:"-"`
}

// MarshalJSON writes the provider's members (name, city, rating_label)
// beside price and job_minutes.
func (p *compactProvider) MarshalJSON() ([]byte, error) {
	pm, err := json.Marshal(p.Provider)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(pm, &m); err != nil {
		return nil, err
	}
	delete(m, "id")
	m["price"] = p.Price
	m["job_minutes"], _ = json.Marshal(p.Minutes)
	if p.Estimate != nil {
		m["tax_reduction_estimate"] = p.Estimate
	}
	return json.Marshal(m)
}

// compactService is the service of a compact text, with its terms.
type compactService struct {
	Service      any    `json:"-"`
	TermsVersion string `json:"-"`
	TermsURL     string `json:"-"`
}

// MarshalJSON writes the service's members beside terms_version and
// terms_url.
func (s compactService) MarshalJSON() ([]byte, error) {
	raw, err := json.Marshal(s.Service)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	m["terms_version"], m["terms_url"] = s.TermsVersion, s.TermsURL
	return json.Marshal(m)
}

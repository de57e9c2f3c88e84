package booking

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"bokat"
)

// contactKeys are detail names that would carry customer contact data,
// which a search must not send (the contract allows postcodes only), in
// English and Swedish. Names are compared folded by contactKey.
var contactKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range []string{
		// English
		"name", "first_name", "last_name", "full_name", "given_name", "family_name", "surname",
		"customer", "customer_name", "contact_name", "contact_person",
		"phone", "phone_number", "telephone", "tel", "mobile", "mobile_number", "cellphone",
		"email", "e_mail", "email_address", "mail",
		"address", "street", "street_address", "address_line", "home_address",
		"personnummer", "personal_number", "personal_id", "ssn",
		// Swedish
		"namn", "förnamn", "efternamn", "fullständigt_namn", "kund", "kundnamn", "kontaktperson",
		"telefon", "telefonnummer", "telnr", "mobil", "mobilnummer", "mobiltelefon", "mobilnr",
		"e_post", "epost", "e_postadress", "epostadress", "mejl", "mejladress", "mailadress",
		"adress", "gatuadress", "hemadress", "gata", "bostadsadress",
		"personnr", "pnr", "samordningsnummer",
	} {
		m[contactKey(k)] = true
	}
	return m
}()

// contactKey folds a detail name for comparison: lower case, with
// separators ("_", "-", ".", spaces) and case differences ("phoneNumber",
// "e-post", "E_Post") removed.
func contactKey(k string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(k) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// maxDetailIssues caps the issues one details value produces.
const maxDetailIssues = 50

// checkDetails rejects details that carry customer contact data: a member
// whose name says it holds contact data, or a value (string, or integer for
// a personnummer) that looks like an e-mail address, a Swedish phone number
// or a personnummer — at any depth, in objects and arrays. The walk is
// bounded by the request body limit. Issues name the field, never the
// value.
func checkDetails(details map[string]any) error {
	var issues []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		if len(issues) >= maxDetailIssues {
			return
		}
		switch v := v.(type) {
		case map[string]any:
			for k, sub := range v {
				field := path + "." + detailName(k)
				if contactKeys[contactKey(k)] {
					issues = append(issues, field+": must not be sent with a search; customer name, address, "+
						"phone and e-mail belong in the confirmation only")
					continue
				}
				if what := contactValue(k); what != "" {
					issues = append(issues, path+": a member name looks like "+what+"; a search carries postcodes only")
					continue
				}
				walk(field, sub)
			}
		case []any:
			for i, sub := range v {
				walk(path+"["+strconv.Itoa(i)+"]", sub)
			}
		case string:
			if what := contactValue(v); what != "" {
				issues = append(issues, path+": looks like "+what+"; a search carries postcodes only, "+
					"contact data belongs in the confirmation only")
			}
		case float64:
			if v == float64(int64(v)) && v > 0 && isPersonnummer(strconv.FormatInt(int64(v), 10)) {
				issues = append(issues, path+": looks like a personnummer; a search carries postcodes only")
			}
		case json.Number:
			if isPersonnummer(v.String()) {
				issues = append(issues, path+": looks like a personnummer; a search carries postcodes only")
			}
		}
	}
	walk("details", details)
	if len(issues) == 0 {
		return nil
	}
	slices.Sort(issues)
	return &bokat.Error{Code: bokat.CodeValidationFailed,
		Detail: "A search carries postcodes only, no customer contact data; see issues.", Issues: issues}
}

// detailName renders a member name for an issue, shortened.
func detailName(k string) string {
	if len(k) <= 64 {
		return k
	}
	cut := 64
	for cut > 0 && !isRuneStart(k[cut]) {
		cut--
	}
	return k[:cut]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

var (
	// emailPattern finds something@domain.tld in free text.
	emailPattern = regexp.MustCompile(`[^\s@<>()\[\],;:"]+@[^\s@<>()\[\],;:"]+\.[^\s@<>()\[\],;:".]{2,}`)
	// numberRun is a run of digits with the separators phone numbers and
	// personnummer are written with.
	numberRun = regexp.MustCompile(`\+?[0-9][0-9 \-()/+]*[0-9]`)
)

// contactValue says what contact data s looks like ("an e-mail address",
// "a phone number", "a personnummer"), or "" when none.
func contactValue(s string) string {
	if strings.ContainsRune(s, '@') && emailPattern.MatchString(s) {
		return "an e-mail address"
	}
	for _, run := range numberRun.FindAllString(s, -1) {
		if isSwedishPhone(run) {
			return "a phone number"
		}
		if isPersonnummer(run) {
			return "a personnummer"
		}
	}
	return ""
}

// isSwedishPhone reports whether run (digits with separators) is a Swedish
// phone number: +46 or 0046 and 7 to 10 digits, or a trunk 0 and 7 to 10
// more digits ("070-123 45 67", "08-12 34 56"). Postcodes ("113 45"),
// counts, areas and years never start with 0 or +46.
func isSwedishPhone(run string) bool {
	plus := strings.HasPrefix(run, "+")
	d := digits(run)
	switch {
	case plus && strings.HasPrefix(d, "46"):
		d = d[2:]
	case !plus && strings.HasPrefix(d, "0046"):
		d = d[4:]
	case !plus && strings.HasPrefix(d, "0") && !strings.HasPrefix(d, "00"):
		d = d[1:]
	default:
		return false
	}
	d = strings.TrimPrefix(d, "0") // "+46 (0)70 …"
	return len(d) >= 7 && len(d) <= 10 && d[0] != '0'
}

// isPersonnummer reports whether run is a Swedish personal identity (or
// co-ordination) number: YYMMDD or YYYYMMDD, an optional - or +, four
// digits, a valid date (day + 60 for co-ordination numbers) and a valid
// Luhn check digit.
func isPersonnummer(run string) bool {
	run = strings.TrimSpace(run)
	if i := strings.IndexAny(run, "-+"); i >= 0 {
		if (i != 6 && i != 8) || len(run)-i-1 != 4 {
			return false
		}
	}
	d := digits(run)
	if len(d) != len(strings.NewReplacer("-", "", "+", "").Replace(run)) {
		return false // other separators: not written as a personnummer
	}
	switch len(d) {
	case 12:
		if d[:2] != "18" && d[:2] != "19" && d[:2] != "20" {
			return false
		}
		d = d[2:]
	case 10:
	default:
		return false
	}
	month, _ := strconv.Atoi(d[2:4])
	day, _ := strconv.Atoi(d[4:6])
	if day > 60 {
		day -= 60
	}
	if month < 1 || month > 12 || day < 1 || day > 31 {
		return false
	}
	sum := 0
	for i := 0; i < 10; i++ {
		n := int(d[i] - '0')
		if i%2 == 0 {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
	}
	return sum%10 == 0
}

func digits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

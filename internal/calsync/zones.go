package calsync

import (
	"strings"
	"time"

	"bokat/internal/schedule"
)

// windowsZones maps the Windows time zone names that Outlook and Exchange
// write as TZID to IANA zones (after the Unicode CLDR table; for the zones
// Swedish providers meet, the zone of the Swedish or nearest city).
var windowsZones = map[string]string{
	"W. Europe Standard Time":         "Europe/Stockholm",
	"Central Europe Standard Time":    "Europe/Budapest",
	"Central European Standard Time":  "Europe/Warsaw",
	"Romance Standard Time":           "Europe/Paris",
	"GMT Standard Time":               "Europe/London",
	"Greenwich Standard Time":         "Atlantic/Reykjavik",
	"UTC":                             "UTC",
	"Coordinated Universal Time":      "UTC",
	"FLE Standard Time":               "Europe/Helsinki",
	"E. Europe Standard Time":         "Europe/Chisinau",
	"GTB Standard Time":               "Europe/Bucharest",
	"Kaliningrad Standard Time":       "Europe/Kaliningrad",
	"Russian Standard Time":           "Europe/Moscow",
	"Turkey Standard Time":            "Europe/Istanbul",
	"Israel Standard Time":            "Asia/Jerusalem",
	"Egypt Standard Time":             "Africa/Cairo",
	"South Africa Standard Time":      "Africa/Johannesburg",
	"Arabian Standard Time":           "Asia/Dubai",
	"India Standard Time":             "Asia/Kolkata",
	"SE Asia Standard Time":           "Asia/Bangkok",
	"Singapore Standard Time":         "Asia/Singapore",
	"China Standard Time":             "Asia/Shanghai",
	"Tokyo Standard Time":             "Asia/Tokyo",
	"Korea Standard Time":             "Asia/Seoul",
	"AUS Eastern Standard Time":       "Australia/Sydney",
	"New Zealand Standard Time":       "Pacific/Auckland",
	"Atlantic Standard Time":          "America/Halifax",
	"Eastern Standard Time":           "America/New_York",
	"Central Standard Time":           "America/Chicago",
	"Mountain Standard Time":          "America/Denver",
	"Pacific Standard Time":           "America/Los_Angeles",
	"E. South America Standard Time":  "America/Sao_Paulo",
	"Central America Standard Time":   "America/Guatemala",
	"SA Pacific Standard Time":        "America/Bogota",
	"Mid-Atlantic Standard Time":      "Atlantic/South_Georgia",
	"Azores Standard Time":            "Atlantic/Azores",
	"Morocco Standard Time":           "Africa/Casablanca",
	"W. Central Africa Standard Time": "Africa/Lagos",
	"E. Africa Standard Time":         "Africa/Nairobi",
}

// maxZones bounds the distinct TZIDs one feed may make the parser look up.
const maxZones = 64

// zones resolves TZID values for one parse.
type zones struct {
	cache map[string]*time.Location
	// unknown counts TZIDs read as Europe/Stockholm because nothing else
	// fitted.
	unknown int
}

// zone returns the location a TZID names: an IANA name, a Windows name, an
// Outlook display name that mentions Stockholm; else Europe/Stockholm,
// where Bokat's providers work, counted in unknown.
func (z *zones) zone(tzid string) *time.Location {
	tzid = strings.Trim(strings.TrimSpace(tzid), `"`)
	if loc, ok := z.cache[tzid]; ok {
		return loc
	}
	loc := lookupZone(tzid)
	if loc == nil {
		z.unknown++
		loc = schedule.Stockholm()
	}
	if z.cache == nil {
		z.cache = map[string]*time.Location{}
	}
	if len(z.cache) < maxZones {
		z.cache[tzid] = loc
	}
	return loc
}

func lookupZone(tzid string) *time.Location {
	if name, ok := windowsZones[tzid]; ok {
		tzid = name
	}
	// Some producers prefix the IANA name with a path ("/Europe/Stockholm",
	// "/mozilla.org/20050126_1/Europe/Stockholm").
	if i := strings.LastIndex(tzid, "/"); strings.HasPrefix(tzid, "/") && i > 0 {
		if j := strings.LastIndex(tzid[:i], "/"); j >= 0 {
			tzid = tzid[j+1:]
		}
	}
	if tzid == "" || len(tzid) > 64 || strings.Contains(tzid, "..") || strings.HasPrefix(tzid, "/") {
		return nil
	}
	if strings.Contains(tzid, "Stockholm") {
		return schedule.Stockholm()
	}
	if tzid == "Local" {
		return nil
	}
	loc, err := time.LoadLocation(tzid)
	if err != nil {
		return nil
	}
	return loc
}

package provider

import "bokat/internal/web"

// supplyTexts are the supply pages' strings.
var supplyTexts = web.Texts{
	web.SV: {
		"nav_blocks":        "Blockera tid",
		"nav_hours":         "Arbetstider",
		"nav_prices":        "Priser",
		"nav_postcodes":     "Postnummer",
		"blocks_title":      "Blockerad tid",
		"blocks_list":       "Kommande blockeringar",
		"no_blocks":         "Ingen tid är blockerad.",
		"col_repeat":        "Upprepas",
		"col_note":          "Anteckning",
		"once":              "En gång",
		"weekly_n":          "Varje vecka, %d veckor",
		"from_file":         "från operatörens fil",
		"block_add":         "Blockera tid",
		"block_kind":        "Vad vill du blockera?",
		"kind_hours":        "Timmar en dag",
		"kind_days":         "Hela dagar",
		"block_from":        "Datum (första dagen)",
		"block_to":          "Sista dagen",
		"block_to_help":     "Bara för hela dagar. Lämna tomt för en dag.",
		"block_start":       "Från klockan",
		"block_end":         "Till klockan",
		"block_weeks":       "Antal veckor",
		"block_weeks_help":  "1 betyder en gång. Fler veckor upprepar samma tid varje vecka, högst 52.",
		"block_note":        "Anteckning (syns bara för er)",
		"block_button":      "Blockera",
		"block_added":       "Tiden är blockerad. Inga nya bokningar tas emot då.",
		"block_removed":     "Blockeringen är borttagen.",
		"err_block_booking": "Tiden kan inte blockeras: bokningen %s (%s) ligger där. Avboka eller flytta den först.",
		"err_check":         "Ändringen sparades inte. Kontrollera:",
		"hours_title":       "Arbetstider",
		"weekly_heading":    "Veckans arbetstider",
		"weekly_help":       "Skriv tider som 08:00-17:00, flera med komma: 08:00-12:00, 13:00-17:00. Tomt betyder stängt.",
		"day_monday":        "Måndag",
		"day_tuesday":       "Tisdag",
		"day_wednesday":     "Onsdag",
		"day_thursday":      "Torsdag",
		"day_friday":        "Fredag",
		"day_saturday":      "Lördag",
		"day_sunday":        "Söndag",
		"notice_label":      "Minsta varsel (minuter)",
		"horizon_label":     "Hur långt fram (dagar)",
		"save":              "Spara",
		"hours_saved":       "Arbetstiderna är sparade.",
		"dates_heading":     "Enskilda dagar",
		"no_dates":          "Inga dagar med egna tider.",
		"closed":            "stängt",
		"day_date":          "Datum",
		"day_closed":        "Stängt hela dagen",
		"day_ranges":        "Tider den dagen",
		"day_button":        "Spara dagen",
		"day_saved":         "Dagen är sparad.",
		"day_removed":       "Dagen följer veckans tider igen.",
		"pause_heading":     "Paus",
		"pause_intro":       "Ta inte emot nya bokningar till och med dagen före ett datum. Bekräftade bokningar ligger kvar.",
		"paused_until":      "Ni tar inte emot bokningar förrän %s.",
		"pause_until":       "Ta emot bokningar igen från",
		"pause_button":      "Pausa",
		"resume_button":     "Ta emot bokningar nu",
		"pause_saved":       "Pausen är sparad.",
		"prices_title":      "Priser",
		"prices_help":       "Ert pris i hela kronor inklusive moms. Tomt betyder att ni inte erbjuder tjänsten. Reglerna är desamma som i leverantörsfilen.",
		"col_price":         "Pris (kr)",
		"col_minimum":       "Minsta debitering (kr)",
		"col_labour":        "Andel arbetskostnad (%)",
		"labour_help":       "Andel arbetskostnad (%) — för preliminär ROT/RUT-beräkning: hur stor del av priset som är arbete, inklusive moms (0–100). Tomt betyder inte angivet; då visas ingen uppskattning.",
		"per_unit":          "per %s",
		"prices_saved":      "Priserna är sparade. Bekräftade bokningar behåller sina priser.",
		"postcodes_title":   "Postnummer",
		"postcodes_now":     "Ni tar i dag uppdrag i:",
		"postcodes_label":   "Postnummer ni tar uppdrag i",
		"postcodes_help":    "Ett per rad: ett postnummer (113 45), början av postnummer (113) eller ett intervall (111-118).",
		"postcodes_saved":   "Postnumren är sparade.",
	},
	web.EN: {
		"nav_blocks":        "Block time",
		"nav_hours":         "Hours",
		"nav_prices":        "Prices",
		"nav_postcodes":     "Postcodes",
		"blocks_title":      "Blocked time",
		"blocks_list":       "Upcoming blocks",
		"no_blocks":         "No time is blocked.",
		"col_repeat":        "Repeats",
		"col_note":          "Note",
		"once":              "Once",
		"weekly_n":          "Weekly, %d weeks",
		"from_file":         "from the operator's file",
		"block_add":         "Block time",
		"block_kind":        "What do you want to block?",
		"kind_hours":        "Hours of one day",
		"kind_days":         "Whole days",
		"block_from":        "Date (first day)",
		"block_to":          "Last day",
		"block_to_help":     "Whole days only. Leave empty for one day.",
		"block_start":       "From",
		"block_end":         "To",
		"block_weeks":       "Number of weeks",
		"block_weeks_help":  "1 means once. More weeks repeat the same time every week, at most 52.",
		"block_note":        "Note (only you see it)",
		"block_button":      "Block",
		"block_added":       "The time is blocked. No new bookings are taken then.",
		"block_removed":     "The block is removed.",
		"err_block_booking": "The time cannot be blocked: booking %s (%s) is there. Cancel or move it first.",
		"err_check":         "Nothing was saved. Check:",
		"hours_title":       "Hours",
		"weekly_heading":    "Weekly hours",
		"weekly_help":       "Write times like 08:00-17:00, several with commas: 08:00-12:00, 13:00-17:00. Empty means closed.",
		"day_monday":        "Monday",
		"day_tuesday":       "Tuesday",
		"day_wednesday":     "Wednesday",
		"day_thursday":      "Thursday",
		"day_friday":        "Friday",
		"day_saturday":      "Saturday",
		"day_sunday":        "Sunday",
		"notice_label":      "Minimum notice (minutes)",
		"horizon_label":     "How far ahead (days)",
		"save":              "Save",
		"hours_saved":       "The hours are saved.",
		"dates_heading":     "Single dates",
		"no_dates":          "No dates with their own hours.",
		"closed":            "closed",
		"day_date":          "Date",
		"day_closed":        "Closed all day",
		"day_ranges":        "Hours that day",
		"day_button":        "Save the date",
		"day_saved":         "The date is saved.",
		"day_removed":       "The date follows the weekly hours again.",
		"pause_heading":     "Pause",
		"pause_intro":       "Take no new bookings until a date. Confirmed bookings stay.",
		"paused_until":      "You take no bookings until %s.",
		"pause_until":       "Take bookings again from",
		"pause_button":      "Pause",
		"resume_button":     "Take bookings now",
		"pause_saved":       "The pause is saved.",
		"prices_title":      "Prices",
		"prices_help":       "Your price in whole kronor including VAT. Empty means you do not offer the service. The rules are those of the supply file.",
		"col_price":         "Price (SEK)",
		"col_minimum":       "Minimum charge (SEK)",
		"col_labour":        "Labour share (%)",
		"labour_help":       "Labour share (%) — for the preliminary ROT/RUT estimate: how much of the price is labour, including VAT (0–100). Empty means not stated; then no estimate is shown.",
		"per_unit":          "per %s",
		"prices_saved":      "The prices are saved. Confirmed bookings keep their prices.",
		"postcodes_title":   "Postcodes",
		"postcodes_now":     "You take jobs in:",
		"postcodes_label":   "Postcodes you take jobs in",
		"postcodes_help":    "One per line: a postcode (113 45), the start of postcodes (113) or a range (111-118).",
		"postcodes_saved":   "The postcodes are saved.",
	},
}

// mergeTexts returns the texts of all (later ones win).
func mergeTexts(all ...web.Texts) web.Texts {
	out := web.Texts{}
	for _, t := range all {
		for lang, m := range t {
			if out[lang] == nil {
				out[lang] = map[string]string{}
			}
			for k, v := range m {
				out[lang][k] = v
			}
		}
	}
	return out
}

// mergePages returns the page templates of all.
func mergePages(all ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range all {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

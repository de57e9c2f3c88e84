// Package schedule holds the pure calendar rules of Bokat: Swedish days off,
// weekly working hours and free slots. Every rule runs on the Europe/Stockholm wall clock (the zone
// database is embedded), takes the current time as an argument and does no
// I/O.
//
// # Days off
//
// IsNonWorkingDay reports the Swedish public holidays and the eves
// midsommarafton, julafton and nyårsafton; the dates come from the holiday
// library github.com/rickar/cal/v2/se.
//
// # Slots
//
// Slots lays jobs of a given length on a grid of wall-clock starts inside the
// working hours of each day, skipping days off, busy intervals and starts
// before the earliest permitted instant. 08:00 is 08:00 local on both sides
// of a DST change.
package schedule

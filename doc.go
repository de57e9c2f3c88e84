// Package bokat holds the domain vocabulary of the Bokat booking service:
// error codes, principals and the pure rules shared by every layer. It
// imports neither net/http nor database/sql.
package bokat

package bokat

// Contract version strings of the public interface.
const (
	// BookingsContractVersion is the spec_version of search, confirm, cancel
	// and reschedule bodies.
	BookingsContractVersion = "public_bookings_api_v1"
	// RequestsContractVersion is the spec_version of capabilities and request creation.
	RequestsContractVersion = "public_requests_api_v1"
)

package webhook

// What the external tests need of the package's unexported parts.

// SecretContext binds a sealed signing secret to its endpoint.
var SecretContext = secretContext

package taxdeduction

// ParseForTest parses a rules file as Load parses the embedded one.
var ParseForTest = parse

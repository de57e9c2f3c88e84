// Package apidoc renders the documents that describe the API, each from
// the sources the API itself is built from so that none can drift from
// them: the contract as served (GET /v1/openapi.json, its servers naming
// the base URL), the reference page (/docs), llms.txt and the problem type
// pages (/problems). It knows nothing of HTTP: the transport serves what
// it renders.
//
// Reading the contract is the costly part, and the contract never changes
// after it is loaded: Of does it once per contract, and a Set renders for a
// base URL from what it read.
package apidoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
)

// Contract is the contract the documents are rendered from.
type Contract interface {
	// JSON returns the contract document as JSON.
	JSON() []byte
}

// Set is what the documents need of one contract, read once: the document's
// members, the reference page but for its base URL, and the outline
// llms.txt is written from. It is immutable and safe for concurrent use.
type Set struct {
	// served is the document as OpenAPI renders it, split where its
	// servers go.
	served    [2][]byte
	reference docsPage
	outline   openAPIOutline
	// operations are the outlines of the document's operations, by path
	// and lower-case method.
	operations map[string]map[string]operationOutline
}

// sets holds the Set of each contract Of has read, as a func returning it
// (or the error): a process loads one contract, and builds one server on it
// (a test process, hundreds).
var sets sync.Map // Contract -> func() (*Set, error)

// Of returns the Set of c, reading c on the first call for it; later calls
// return the same Set, or the same error. c must be comparable (a pointer)
// and must not change.
func Of(c Contract) (*Set, error) {
	read, ok := sets.Load(c)
	if !ok {
		read, _ = sets.LoadOrStore(c, sync.OnceValues(func() (*Set, error) { return readSet(c.JSON()) }))
	}
	return read.(func() (*Set, error))()
}

// readSet reads the contract document doc.
func readSet(doc []byte) (*Set, error) {
	s := &Set{}
	var err error
	if s.served, err = splitAtServers(doc); err != nil {
		return nil, err
	}
	if s.reference, err = readReference(doc); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(doc, &s.outline); err != nil {
		return nil, fmt.Errorf("apidoc: reading the contract's outline: %w", err)
	}
	if s.operations, err = readOperations(&s.outline); err != nil {
		return nil, err
	}
	return s, nil
}

// OpenAPI returns the contract document as a server at baseURL serves it:
// the same, but with servers naming baseURL, so that generated clients get
// the real address (the checked-in document says "/", whoever serves it).
func (s *Set) OpenAPI(baseURL string) ([]byte, error) {
	servers, err := json.Marshal([]map[string]string{{"url": baseURL, "description": "This server."}})
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(s.served[0])+len(servers)+len(s.served[1]))
	return append(append(append(out, s.served[0]...), servers...), s.served[1]...), nil
}

// splitAtServers writes the document doc as encoding/json writes an object
// (members sorted by name) and returns it split where the value of its
// servers member goes.
func splitAtServers(doc []byte) ([2][]byte, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(doc, &members); err != nil {
		return [2][]byte{}, fmt.Errorf("apidoc: reading the contract document: %w", err)
	}
	if _, ok := members["servers"]; !ok {
		return [2][]byte{}, errors.New("apidoc: the contract document has no servers to render")
	}
	var out [2][]byte
	var b bytes.Buffer
	b.WriteByte('{')
	for i, name := range slices.Sorted(maps.Keys(members)) {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(name)
		if err != nil {
			return out, err
		}
		b.Write(key)
		b.WriteByte(':')
		if name == "servers" {
			out[0] = bytes.Clone(b.Bytes())
			b.Reset()
			continue
		}
		if err := json.Compact(&b, members[name]); err != nil {
			return out, fmt.Errorf("apidoc: reading the contract document: %w", err)
		}
	}
	b.WriteByte('}')
	out[1] = b.Bytes()
	return out, nil
}

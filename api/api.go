// Package api holds the contract of the server's /v1 API: the OpenAPI 3.1
// document the server serves at /openapi.json. The server's contract test
// fails when the routes it registers and this document differ.
package api

import _ "embed"

// OpenAPI is the OpenAPI 3.1 document of the API (openapi.json).
//
//go:embed openapi.json
var OpenAPI []byte

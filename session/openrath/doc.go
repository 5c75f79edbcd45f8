// Package openrath imports and exports the session files of OpenRath-Python,
// the original implementation, as sessions of package session.
package openrath

// Package server is the HTTP face of the auditor.
package server

import _ "github.com/prometheus/client_golang/prometheus"

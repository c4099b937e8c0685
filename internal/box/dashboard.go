package box

import "net/http"

// withDashboard mounts the web dashboard (internal/web) on the https mux.
func (b *Box) withDashboard(mux *http.ServeMux) {}

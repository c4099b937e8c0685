package director

import (
	"sync"
	"time"
)

// How filters travel in advertisements. A filter goes out when it
// changes and again every holdingsRefresh (a director that restarted, or
// missed the ad that carried it, has it back within that), the rest of
// the time as its digest alone. One ad carries at most holdingsBudget
// bytes of filters, so a director relaying a thousand servers stays
// within MaxAdBytes; the filters left out go in the next ads.
const (
	holdingsRefresh = 5 * time.Minute
	holdingsBudget  = 256 << 10
)

// HoldingsSender leaves out of advertisements the filters the directors
// already have. One sender serves one advertiser; it is safe for
// concurrent use.
type HoldingsSender struct {
	mu   sync.Mutex
	sent map[string]sentHoldings // server name → the filter last sent
}

type sentHoldings struct {
	digest string
	at     time.Time
}

// Prepare returns ads, and the servers below them, with the filters the
// directors have (or that are over this ad's budget) reduced to their
// digests, and records the ones left in as sent. The ads' Holdings are
// not changed in place: they may be a registry's.
func (s *HoldingsSender) Prepare(ads []Ad, now time.Time) []Ad {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]sentHoldings{}
	budget := holdingsBudget
	out := s.prepare(ads, now, seen, &budget)
	s.sent = seen
	return out
}

func (s *HoldingsSender) prepare(ads []Ad, now time.Time, seen map[string]sentHoldings, budget *int) []Ad {
	if ads == nil {
		return nil
	}
	out := make([]Ad, len(ads))
	for i, ad := range ads {
		ad.Servers = s.prepare(ad.Servers, now, seen, budget)
		if h := ad.Holdings; h.usable() {
			last, ok := s.sent[ad.Name]
			same := ok && last.digest == h.Digest
			if due := !same || now.Sub(last.at) >= holdingsRefresh; due && len(h.Bits) <= *budget {
				*budget -= len(h.Bits)
				seen[ad.Name] = sentHoldings{digest: h.Digest, at: now}
			} else {
				ad.Holdings = h.summary()
				if same {
					seen[ad.Name] = last // the directors have these bits
				} // else not sent: the next ad tries again
			}
		}
		out[i] = ad
	}
	return out
}

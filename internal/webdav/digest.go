package webdav

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"sitebox/internal/cksum"
	"sitebox/internal/store"
)

// wantDigest parses an RFC 3230 Want-Digest header ("adler32",
// "md5;q=0.3, crc32c;q=1") into the algorithms we compute, best first: by
// q-value, then by order of mention. Unknown algorithms and q=0 are dropped.
func wantDigest(header string) []string {
	type choice struct {
		algo string
		q    float64
	}
	var cs []choice
	seen := map[string]bool{}
	for part := range strings.SplitSeq(header, ",") {
		fields := strings.Split(part, ";")
		algo, err := cksum.Normalize(fields[0])
		if err != nil || strings.TrimSpace(fields[0]) == "" || seen[algo] {
			continue
		}
		q := 1.0
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil || x < 0 || x > 1 {
					x = 0 // a malformed q-value does not win
				}
				q = x
			}
		}
		if q > 0 {
			seen[algo] = true
			cs = append(cs, choice{algo, q})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].q > cs[j].q })
	algos := make([]string, len(cs))
	for i, c := range cs {
		algos[i] = c.algo
	}
	return algos
}

// digest answers a Want-Digest header with the value of a Digest header:
// "adler32=<8 hex>" or "crc32c=<8 hex>", lower-case hex as XrdHttp sends
// for these two, or "md5=<base64>" (RFC 3230) where md5 is offered. It
// returns "" when no requested algorithm is one the store computes: RFC
// 3230 says to omit Digest then.
func (h *Handler) digest(r *http.Request, name string) (string, error) {
	want := r.Header.Values("Want-Digest")
	if len(want) == 0 {
		return "", nil
	}
	for _, algo := range wantDigest(strings.Join(want, ",")) {
		sum, err := store.Checksum(r.Context(), h.store, name, algo)
		if errors.Is(err, store.ErrUnsupported) || errors.Is(err, cksum.ErrUnknownAlgorithm) {
			continue // this store cannot do it; try the client's next choice
		}
		if err != nil {
			return "", err
		}
		return algo + "=" + cksum.DigestValue(algo, sum), nil
	}
	return "", nil
}

// checksums is the value of dCache's Checksums property for a file: its
// adler32 and, where offered, md5, as a comma-separated list of RFC 3230
// Digest values ("adler32=0a1b2c3d,md5=<base64>"); "" when there are none.
func (h *Handler) checksums(ctx context.Context, name string) string {
	var vals []string
	for _, algo := range []string{cksum.Adler32, cksum.MD5} {
		sum, err := store.Checksum(ctx, h.store, name, algo)
		if err != nil {
			h.log.Debug("propfind checksum", "path", name, "algo", algo, "err", err)
			continue
		}
		vals = append(vals, algo+"="+cksum.DigestValue(algo, sum))
	}
	return strings.Join(vals, ",")
}

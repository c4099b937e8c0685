package webdav

import (
	"fmt"
	"strings"

	"sitebox/internal/store"
)

// refuseEncodedSlash refuses "%2F" in a path. Decoded, it would be a
// separator, so "/a%2Fb" would name "/a/b" and a name with a slash in it
// could never be listed back as it was written; kept, it would be a
// name byte no filesystem accepts. Either way a client would be misled,
// so it is refused, naming the problem (400).
func refuseEncodedSlash(escaped string) error {
	if strings.Contains(strings.ToLower(escaped), "%2f") {
		return fmt.Errorf("%w: %%2F (an encoded slash) in a path is not supported; names cannot contain \"/\"", store.ErrInvalid)
	}
	return nil
}

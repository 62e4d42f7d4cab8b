package changelog

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perflog/perflog/config"
)

var pullRef = regexp.MustCompile(`^refs/pull/(\d+)/(?:merge|head)$`)

// maxEventSize bounds the GitHub event file read for the PR number.
const maxEventSize = 64 << 20

// PRFromEnv finds this run's PR in the CI environment: GITHUB_REF
// (refs/pull/N/merge), else pull_request.number in the JSON at
// GITHUB_EVENT_PATH. It returns 0 when neither names one, and where it
// found the number.
func PRFromEnv(getenv func(string) string) (int, string, error) {
	if m := pullRef.FindStringSubmatch(getenv("GITHUB_REF")); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, "GITHUB_REF", nil
	}
	if p := getenv("GITHUB_EVENT_PATH"); p != "" {
		data, err := config.ReadRegular(p, maxEventSize)
		if err != nil {
			return 0, "", fmt.Errorf("GITHUB_EVENT_PATH: %w", err)
		}
		var ev struct {
			PullRequest *struct {
				Number int `json:"number"`
			} `json:"pull_request"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			return 0, "", fmt.Errorf("GITHUB_EVENT_PATH %s: %w", p, err)
		}
		if ev.PullRequest != nil && ev.PullRequest.Number > 0 {
			return ev.PullRequest.Number, "GITHUB_EVENT_PATH", nil
		}
	}
	return 0, "", nil
}

// ShortHash is a commit's id as messages show it.
func ShortHash(h plumbing.Hash) string { return h.String()[:10] }

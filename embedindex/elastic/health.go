package elastic

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/elastic/go-elasticsearch/v8/esapi"
)

// Health is the cluster's state as it bears on one index, as the node
// that answered sees it.
type Health struct {
	// Status is the index's health: "green" (every shard copy
	// assigned), "yellow" (every primary, not every replica) or "red"
	// (a primary missing, or no elected master). "" when the node
	// would not say: the credentials lack the monitor privilege.
	Status string `json:"status"`
	// Nodes and DataNodes are the nodes of the cluster the node knows.
	Nodes     int `json:"number_of_nodes"`
	DataNodes int `json:"number_of_data_nodes"`
	// ActiveShards and UnassignedShards count shard copies of the index.
	ActiveShards     int `json:"active_shards"`
	UnassignedShards int `json:"unassigned_shards"`
	// NoMaster is true when the nodes that answer elect no master:
	// fewer than a quorum of the master-eligible nodes are up. Searches
	// may still be answered from a stale view, so kgrag refuses them.
	NoMaster bool `json:"-"`
}

// String says the health in a sentence: "yellow: 2 nodes, 2 of 4 shard
// copies unassigned".
func (h Health) String() string {
	if h.Status == "" {
		return "unknown (the node would not say: the credentials lack the monitor privilege, or it knows no index by the name)"
	}
	s := fmt.Sprintf("%s: %d node%s", h.Status, h.Nodes, plural(h.Nodes))
	if h.NoMaster {
		s += ", no elected master (fewer than a quorum of master-eligible nodes answer)"
	}
	if h.UnassignedShards > 0 {
		s += fmt.Sprintf(", %d of %d shard copies unassigned", h.UnassignedShards, h.ActiveShards+h.UnassignedShards)
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Serving reports whether the index can answer searches that are whole
// and current: it is not red and a master is elected. Yellow serves: a
// lost replica leaves every primary in place.
func (h Health) Serving() bool { return h.Status != "red" && !h.NoMaster }

// Health reads the health of the index (through its alias) from the
// node's own view of the cluster, without waiting: asking the master
// would wait for one, and a cluster without one is what this must report
// at once. When the index is red it also asks whether a master is
// elected, to say why.
func (x *Index) Health(ctx context.Context) (Health, error) {
	h, _, err := health(ctx, &conn{cfg: x.cfg, es: x.es})
	return h, err
}

// health is Health; found is false when the node knows no index by the
// alias (then only NoMaster is set).
func health(ctx context.Context, c *conn) (h Health, found bool, err error) {
	local := true
	// No wait: an index the node does not know would otherwise be
	// waited for, for 30 seconds; this answers 408 at once instead.
	res, err := esapi.ClusterHealthRequest{Index: []string{c.cfg.Index}, Local: &local, Timeout: time.Nanosecond}.Do(ctx, c.es)
	if err != nil {
		return Health{}, false, c.wrap("read cluster health of", err)
	}
	defer res.Body.Close()
	switch res.StatusCode {
	case http.StatusOK:
		found = true
		if err := json.NewDecoder(res.Body).Decode(&h); err != nil {
			return Health{}, false, c.wrap("read cluster health of", fmt.Errorf("decode response: %w", err))
		}
	case http.StatusRequestTimeout:
		// Not (yet) an index here: the mapping request says which, when
		// there is a master to ask.
	case http.StatusUnauthorized, http.StatusForbidden:
		return Health{}, true, nil
	default:
		return Health{}, false, c.statusError("read cluster health of", res)
	}
	if !found || h.Status == "red" {
		var state struct {
			Master *string `json:"master_node"`
		}
		err := c.do(ctx, "read master of", esapi.ClusterStateRequest{Metric: []string{"master_node"}, Local: &local}, &state)
		if err == nil && state.Master == nil {
			h.NoMaster = true
		}
	}
	return h, found, nil
}

// checkServing fails, with an error of kind ErrUnavailable, when the
// cluster cannot serve the index whole and current. An index the node
// does not know passes, for the caller to find missing, unless there is
// no master to ask.
func checkServing(ctx context.Context, c *conn) error {
	h, found, err := health(ctx, c)
	switch {
	case err != nil:
		return err
	case !found && !h.NoMaster, h.Serving():
		return nil
	}
	state := "health " + h.String()
	if !found {
		state = "no elected master (fewer than a quorum of master-eligible nodes answer)"
	}
	return &Error{Op: "use", URL: redactURLs(c.cfg.URL), Index: c.cfg.Index, Kind: ErrUnavailable,
		Err:  fmt.Errorf("the cluster cannot serve the index: %s", state),
		Hint: "bring the lost nodes back; kgrag doctor shows the health"}
}

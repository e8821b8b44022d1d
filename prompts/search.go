package prompts

// BasicAnswer fills basic_answer.tmpl, the system prompt of a basic search
// answer: the Sources table of the passages nearest the question.
type BasicAnswer struct {
	Context      string
	ResponseType string
}

// DriftExpand fills drift_expand.tmpl, the one user message of DRIFT's
// first call: a hypothetical answer to the question in the shape of a
// community report (Template), whose embedding finds the reports to start
// from (HyDE).
type DriftExpand struct {
	Question string
	Template string
}

// DriftPrimer fills drift_primer.tmpl, the one user message of a DRIFT
// primer call: the question and one fold of the reports nearest it. The
// reply is {"intermediate_answer", "score", "follow_up_queries"}.
type DriftPrimer struct {
	Question string
	Reports  string
}

// DriftLocal fills drift_local.tmpl, the system prompt of a DRIFT
// follow-up: local search's context for the follow-up question (the user
// message), the question the search is about, and how many follow-ups to
// suggest. The reply is {"response", "score", "follow_up_queries"}.
type DriftLocal struct {
	Context        string
	GlobalQuestion string
	FollowUps      int
	ResponseType   string
}

// DriftReduce fills drift_reduce.tmpl, the system prompt of DRIFT's last
// call: the answers of the steps, one section each.
type DriftReduce struct {
	Context      string
	ResponseType string
}

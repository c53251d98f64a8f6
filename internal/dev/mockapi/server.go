package mockapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Defaults for Options.
const (
	DefaultMaxRequests = 500
	DefaultTimeout     = 5 * time.Minute
	DefaultGrace       = 5 * time.Second
	DefaultText        = "OK."
	DefaultModel       = "claude-mock-1"
	maxBody            = 64 << 20
	maxRefused         = 100 // refused requests recorded at most
)

// ErrTimeLimit and ErrRequestLimit are what Err returns after the server
// stopped itself.
var (
	ErrTimeLimit    = errors.New("mockapi: time limit reached")
	ErrRequestLimit = errors.New("mockapi: request limit reached")
	errClosed       = errors.New("mockapi: closed")
)

// Options configure a Server.
type Options struct {
	Script *Script
	// MaxRequests is how many requests are served; the next one is answered
	// with an error and the server stops. 0 means DefaultMaxRequests.
	MaxRequests int
	// Timeout is how long the server lives; then it stops. 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// Grace is how long a server stopped by a limit keeps answering every
	// request with a non-retryable 400 before it closes its port (the CLI
	// retries connection errors and 5xx with backoff for minutes, but
	// gives up at once on a 400). 0 means DefaultGrace.
	Grace time.Duration
	// Logf receives one line per request (e.g. t.Logf); nil logs nothing.
	// It is never called after Close returns.
	Logf func(format string, args ...any)
	// ChunkSize is the size of each text_delta / input_json_delta; 0 means
	// 32 bytes.
	ChunkSize int
}

// Server is a running mock. All methods are safe for concurrent use.
type Server struct {
	opts     Options
	script   *Script
	listener net.Listener
	http     *http.Server
	url      string
	timer    *time.Timer
	done     chan struct{}

	mu       sync.Mutex
	requests []*Request
	bound    map[string]string // agent id -> conversation name
	seq      int
	nextID   int
	stopErr  error
	logMu    sync.Mutex
	logOff   bool
	stopOnce sync.Once
}

// Start validates the script and starts a server on 127.0.0.1 (a free
// port).
func Start(opts Options) (*Server, error) {
	if opts.Script == nil {
		return nil, errors.New("mockapi: Options.Script is nil")
	}
	if err := opts.Script.Validate(); err != nil {
		return nil, err
	}
	if opts.MaxRequests <= 0 {
		opts.MaxRequests = DefaultMaxRequests
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	if opts.ChunkSize <= 0 {
		opts.ChunkSize = 32
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mockapi: listen: %w", err)
	}
	s := &Server{
		opts:     opts,
		script:   opts.Script,
		listener: ln,
		url:      "http://" + ln.Addr().String(),
		done:     make(chan struct{}),
		bound:    map[string]string{},
	}
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	s.timer = time.AfterFunc(opts.Timeout, func() { s.limit(ErrTimeLimit) })
	s.mu.Unlock()
	go func() { _ = s.http.Serve(ln) }()
	return s, nil
}

// URL is the base URL to put in ANTHROPIC_BASE_URL.
func (s *Server) URL() string { return s.url }

// Done is closed once the port is closed (Close, or Grace after a limit).
func (s *Server) Done() <-chan struct{} { return s.done }

// Err is nil while the server runs or after Close, ErrTimeLimit or
// ErrRequestLimit once it stopped itself.
func (s *Server) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if errors.Is(s.stopErr, errClosed) {
		return nil
	}
	return s.stopErr
}

// Close stops the server, waiting briefly for requests in flight.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.stopErr == nil {
		s.stopErr = errClosed
	}
	s.mu.Unlock()
	s.shutdown(true)
	s.logMu.Lock()
	s.logOff = true
	s.logMu.Unlock()
	return nil
}

// limit stops serving scripts: from now on every request gets a
// non-retryable 400, and after Options.Grace the port closes.
func (s *Server) limit(reason error) {
	s.mu.Lock()
	first := s.stopErr == nil
	if first {
		s.stopErr = reason
		s.timer.Stop()
	}
	s.mu.Unlock()
	if !first {
		return
	}
	s.logf("mockapi: %v; answering 400 for %v, then closing", reason, s.opts.Grace)
	time.AfterFunc(s.opts.Grace, func() { s.shutdown(false) })
}

func (s *Server) shutdown(wait bool) {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		s.timer.Stop()
		s.mu.Unlock()
		if wait {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_ = s.http.Shutdown(ctx)
			cancel()
		}
		_ = s.http.Close()
		close(s.done)
	})
	if wait {
		<-s.done
	}
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	if !s.logOff {
		s.opts.Logf(format, args...)
	}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(hr.Body, maxBody))
	req := &Request{
		Time:      time.Now(),
		Method:    hr.Method,
		Path:      hr.URL.Path,
		RawQuery:  hr.URL.RawQuery,
		Header:    hr.Header.Clone(),
		Body:      body,
		AgentID:   hr.Header.Get(AgentIDHeader),
		SessionID: hr.Header.Get(SessionIDHeader),
		Turn:      -1,
	}
	s.mu.Lock()
	if err := s.stopErr; err != nil {
		// 400 because the CLI retries 5xx and connection errors for minutes.
		req.Refused, req.Status = true, http.StatusBadRequest
		s.seq++
		req.Seq = s.seq
		if len(s.requests) < s.opts.MaxRequests+maxRefused {
			s.requests = append(s.requests, req)
		}
		s.mu.Unlock()
		s.logf("mockapi: %s", req)
		writeError(w, req.Status, "invalid_request_error", "mockapi stopped: "+err.Error())
		return
	}
	s.seq++
	req.Seq = s.seq
	overLimit := req.Seq > s.opts.MaxRequests
	s.mu.Unlock()

	// reply is filled in below; the request is recorded (and no longer
	// changed) before the reply is written, so readers never race.
	var reply func()
	path := strings.TrimSuffix(hr.URL.Path, "/")
	switch {
	case overLimit:
		req.Status = http.StatusBadRequest
		reply = func() {
			writeError(w, req.Status, "invalid_request_error",
				fmt.Sprintf("mockapi: request limit (%d) reached", s.opts.MaxRequests))
			s.limit(ErrRequestLimit)
		}
	case hr.Method == http.MethodHead || (hr.Method == http.MethodGet && path == ""):
		req.Status = http.StatusOK
		reply = func() { w.WriteHeader(req.Status) }
	case hr.Method == http.MethodPost && path == "/v1/messages":
		reply = s.messages(w, req)
	case hr.Method == http.MethodPost && path == "/v1/messages/count_tokens":
		req.Status = http.StatusOK
		reply = func() {
			writeJSON(w, req.Status, map[string]any{"input_tokens": estimateTokens(len(body))})
		}
	default:
		req.Unknown = true
		req.Status = http.StatusNotFound
		s.logf("mockapi: unknown request %s %s headers=%v body=%q", hr.Method, hr.URL, hr.Header, clip(string(body), 300))
		reply = func() {
			writeError(w, req.Status, "not_found_error", fmt.Sprintf("mockapi: no route for %s %s", hr.Method, hr.URL.Path))
		}
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	s.logf("mockapi: %s", req)
	reply()
}

// messages handles POST /v1/messages: it fills in req and returns the
// function writing the reply.
func (s *Server) messages(w http.ResponseWriter, req *Request) func() {
	var mr MessagesRequest
	if err := json.Unmarshal(req.Body, &mr); err != nil {
		req.Status = http.StatusBadRequest
		s.logf("mockapi: #%d bad messages body: %v", req.Seq, err)
		return func() {
			writeError(w, req.Status, "invalid_request_error", "mockapi: cannot parse body: "+err.Error())
		}
	}
	req.Messages = &mr

	s.mu.Lock()
	conv := s.match(req)
	turn := Turn{Blocks: []Block{Text(s.defaultText())}}
	if conv != nil {
		req.Conversation = conv.Name
		req.Turn = req.AssistantTurns()
		if i, ok := conv.turnWhen(req.NewText()); ok {
			req.Turn = i
			turn = conv.Turns[i]
		} else if req.Turn < len(conv.Turns) && conv.Turns[req.Turn].When == "" {
			turn = conv.Turns[req.Turn]
		} else {
			req.Overflow = true
		}
		if req.AgentID != "" {
			if _, ok := s.bound[req.AgentID]; !ok {
				s.bound[req.AgentID] = conv.Name
			}
		}
	}
	ids := make([]string, len(turn.Blocks))
	for i, b := range turn.Blocks {
		if !b.isTool() {
			continue
		}
		if b.ID != "" {
			ids[i] = b.ID
		} else {
			s.nextID++
			ids[i] = fmt.Sprintf("toolu_mock%04d_%s_t%d_b%d", s.nextID, idSafe(req.Conversation), req.Turn, i)
		}
		req.ToolUseIDs = append(req.ToolUseIDs, ids[i])
	}
	req.Served = &turn
	s.mu.Unlock()

	msgID := fmt.Sprintf("msg_mock%04d", req.Seq)
	model := mr.Model
	if model == "" {
		model = DefaultModel
	}
	req.Status = http.StatusOK
	stream, chunk, size := mr.Stream, s.opts.ChunkSize, len(req.Body)
	return func() {
		w.Header().Set("request-id", fmt.Sprintf("req_mock%04d", req.Seq))
		if !stream {
			writeJSON(w, http.StatusOK, message(msgID, model, turn, ids, size))
			return
		}
		writeStream(w, msgID, model, turn, ids, size, chunk)
	}
}

// match picks the conversation of a request; s.mu is held.
func (s *Server) match(req *Request) *Conversation {
	if req.AgentID != "" {
		for _, c := range s.script.Conversations {
			if c.Match.AgentID == req.AgentID {
				return c
			}
		}
		if name, ok := s.bound[req.AgentID]; ok {
			return s.script.Conversation(name)
		}
	}
	var sys, user string
	sysDone, userDone := false, false
	for _, c := range s.script.Conversations {
		m := c.Match
		switch m.Thread {
		case ThreadMain:
			if req.AgentID != "" {
				continue
			}
		case ThreadSub:
			if req.AgentID == "" {
				continue
			}
		}
		if m.AgentID != "" && m.AgentID != req.AgentID {
			continue
		}
		if m.SystemContains != "" {
			if !sysDone {
				sys, sysDone = req.SystemText(), true
			}
			if !strings.Contains(sys, m.SystemContains) {
				continue
			}
		}
		if m.UserContains != "" {
			if !userDone {
				user, userDone = req.FirstUserText(), true
			}
			if !strings.Contains(user, m.UserContains) {
				continue
			}
		}
		return c
	}
	return nil
}

func (s *Server) defaultText() string {
	if s.script.DefaultText != "" {
		return s.script.DefaultText
	}
	return DefaultText
}

var idUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

func idSafe(name string) string {
	if name == "" {
		return "default"
	}
	return idUnsafe.ReplaceAllString(name, "_")
}

// Requests returns every request recorded so far, in arrival order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	out := append([]*Request(nil), s.requests...)
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// MessageRequests returns the POST /v1/messages requests.
func (s *Server) MessageRequests() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Messages != nil {
			out = append(out, r)
		}
	}
	return out
}

// For returns the requests matched to conversation name.
func (s *Server) For(name string) []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Conversation == name {
			out = append(out, r)
		}
	}
	return out
}

// Unmatched returns the messages requests that matched no conversation.
func (s *Server) Unmatched() []*Request {
	var out []*Request
	for _, r := range s.MessageRequests() {
		if r.Conversation == "" {
			out = append(out, r)
		}
	}
	return out
}

// Overflows returns the requests that asked a conversation for a turn past
// its end.
func (s *Server) Overflows() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Overflow {
			out = append(out, r)
		}
	}
	return out
}

// Unknown returns the requests the mock does not implement.
func (s *Server) Unknown() []*Request {
	var out []*Request
	for _, r := range s.Requests() {
		if r.Unknown {
			out = append(out, r)
		}
	}
	return out
}

// AgentIDs maps each x-claude-code-agent-id seen to the conversation it was
// matched to.
func (s *Server) AgentIDs() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.bound))
	for k, v := range s.bound {
		out[k] = v
	}
	return out
}

// FindToolResult returns the first request holding a tool_result whose
// text contains substr (e.g. "PreToolUse:Agent hook error: ").
func (s *Server) FindToolResult(substr string) (*Request, ToolResult, bool) {
	for _, r := range s.MessageRequests() {
		for _, tr := range r.ToolResults() {
			if strings.Contains(tr.Text, substr) {
				return r, tr, true
			}
		}
	}
	return nil, ToolResult{}, false
}

// FindText returns the first request whose system prompt, a system
// message or a user text block contains substr (e.g. "Stop hook feedback:"
// or a checkpoint line).
func (s *Server) FindText(substr string) (*Request, bool) {
	for _, r := range s.MessageRequests() {
		if r.HasText(substr) {
			return r, true
		}
	}
	return nil, false
}

// Summary is one line per recorded request, for test failure messages.
func (s *Server) Summary() string {
	var b strings.Builder
	for _, r := range s.Requests() {
		b.WriteString(r.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// turnWhen finds the last turn whose When occurs in text.
func (c *Conversation) turnWhen(text string) (int, bool) {
	for i := len(c.Turns) - 1; i >= 0; i-- {
		if w := c.Turns[i].When; w != "" && strings.Contains(text, w) {
			return i, true
		}
	}
	return 0, false
}

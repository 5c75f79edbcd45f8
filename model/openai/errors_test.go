package openai

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openrath/rath/model"
	"github.com/openrath/rath/session"
)

func statuses(as []session.Attempt) []int {
	out := make([]int, len(as))
	for i, a := range as {
		out[i] = a.Status
	}
	return out
}

func TestRetryAfter429ThenSuccess(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Retry-After", "0.05")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"Rate limit reached for gpt-test","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)
			return
		}
		sse(w, text("after the wait"), finish("stop"), done)
	})

	// The attempt itself reports the wait asked for.
	_, _, err := call(t, f.provider(t), userRequest("x"))
	var se *model.StatusError
	if !errors.As(err, &se) || se.Status != 429 || se.RetryAfter != 50*time.Millisecond || se.Message != "Rate limit reached for gpt-test" {
		t.Fatalf("attempt: %#v, want a 429 StatusError asking for 50ms", err)
	}

	f.mu.Lock()
	f.hits = nil
	f.mu.Unlock()
	resp, err := model.Generate(context.Background(), f.retrying(t), userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "after the wait" {
		t.Fatalf("text = %q", resp.Text)
	}
	if got := statuses(resp.Attempts); len(got) != 2 || got[0] != 429 || got[1] != 200 {
		t.Fatalf("attempt statuses = %v, want [429 200]", got)
	}
	if !strings.Contains(resp.Attempts[0].Error, "Rate limit reached") {
		t.Fatalf("first attempt's error = %q", resp.Attempts[0].Error)
	}
	// Backoff alone is at most 5ms; only Retry-After makes the gap 50ms. (A
	// timer never fires early, so this lower bound cannot flake.)
	hits := f.requests()
	if gap := hits[1].at.Sub(hits[0].at); gap < 50*time.Millisecond {
		t.Fatalf("retried after %s, before the 50ms Retry-After", gap)
	}
}

func TestServerErrorThenSuccess(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, "upstream exploded")
			return
		}
		sse(w, text("fine"), finish("stop"), done)
	})
	resp, err := model.Generate(context.Background(), f.retrying(t), userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(resp.Attempts); len(got) != 2 || got[0] != 500 || got[1] != 200 || resp.Text != "fine" {
		t.Fatalf("statuses %v, text %q", got, resp.Text)
	}
	if !strings.Contains(resp.Attempts[0].Error, "upstream exploded") {
		t.Fatalf("first attempt's error = %q, want the body's text", resp.Attempts[0].Error)
	}
}

func TestBadRequestIsNotRetried(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"Invalid value for 'tool_choice': no function named 'x'.","type":"invalid_request_error","param":"tool_choice","code":null}}`)
	})
	_, err := model.Generate(context.Background(), f.retrying(t), userRequest("x"))
	var se *model.StatusError
	if !errors.As(err, &se) || se.Status != 400 || se.Message != "Invalid value for 'tool_choice': no function named 'x'." {
		t.Fatalf("got %v, want a 400 StatusError with the provider's message", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
	if got := statuses(model.AttemptsOf(err)); len(got) != 1 || got[0] != 400 {
		t.Fatalf("attempts %v", got)
	}
}

// Whatever way a server echoes the key back, no error shows it: neither the
// provider's own nor model.New's, even with no Secrets given to model.New.
func TestAPIKeyNeverInErrors(t *testing.T) {
	echo := map[string]func(w http.ResponseWriter, key string){
		"401 json": func(w http.ResponseWriter, key string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, key)
		},
		"500 text": func(w http.ResponseWriter, key string) {
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "proxy failed for Authorization: Bearer %s", key)
		},
		"stream error event": func(w http.ResponseWriter, key string) {
			sse(w, text("a"), `{"error":{"message":"key `+key+` revoked mid-stream"}}`)
		},
		"stream error event with status": func(w http.ResponseWriter, key string) {
			sse(w, `{"error":{"message":"key `+key+` is over quota","code":429}}`)
		},
	}
	for name, reply := range echo {
		t.Run(name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
				reply(w, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			})
			_, _, err := call(t, f.provider(t), userRequest("x"))
			if err == nil {
				t.Fatal("no error")
			}
			if got := f.requests()[0].header.Get("Authorization"); got != "Bearer "+testKey {
				t.Fatalf("the server saw Authorization %q; the test needs the real key echoed", got)
			}
			check := func(where, s string) {
				t.Helper()
				if strings.Contains(s, testKey) {
					t.Fatalf("%s shows the key: %s", where, s)
				}
			}
			check("Attempt's error", err.Error())
			check("Attempt's error (%+v)", fmt.Sprintf("%+v", err))
			var se *model.StatusError
			if errors.As(err, &se) {
				check("StatusError.Message", se.Message)
				if !strings.Contains(se.Message, "[redacted]") {
					t.Fatalf("message %q: the echoed key should be marked as redacted", se.Message)
				}
			}
			var pe *ProviderError
			if errors.As(err, &pe) {
				check("ProviderError.Message", pe.Message)
			}
			for _, secrets := range [][]string{{testKey}, nil} {
				m := model.New(f.provider(t), "gpt-test", model.Options{
					Retry:   model.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
					Secrets: secrets,
				})
				_, err := model.Generate(context.Background(), m, userRequest("x"))
				if err == nil {
					t.Fatal("no error through model.New")
				}
				check("model.New's error", err.Error())
				for _, a := range model.AttemptsOf(err) {
					check("an attempt's error", a.Error)
				}
			}
		})
	}
}

func TestConnectionErrorIsRetryable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/v1"
	ln.Close() // nothing listens there now
	p, err := New(model.ProviderConfig{BaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Attempt(context.Background(), userRequest("x"), func(model.Event) bool { return true })
	if err == nil || !model.Retryable(err) {
		t.Fatalf("got %v, want a retryable connection error", err)
	}
	m := model.New(p, "gpt-test", model.Options{Retry: model.RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}})
	_, err = model.Generate(context.Background(), m, userRequest("x"))
	if n := len(model.AttemptsOf(err)); n != 2 {
		t.Fatalf("%d attempts, want 2: %v", n, err)
	}
}

func TestBodyMessage(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"message":"bad model","type":"invalid_request_error"}}`:  "bad model",
		`{"error":"model 'llama9' not found"}`:                              "model 'llama9' not found",
		`{"object":"error","message":"max_tokens is too large","code":400}`: "max_tokens is too large",
		`{"error":{"code":"server_overloaded"}}`:                            "server_overloaded",
		"<html><body>502 Bad Gateway</body></html>":                         "<html><body>502 Bad Gateway</body></html>",
		`{"detail":"Not Found"}`:                                            `{"detail":"Not Found"}`,
	} {
		if got := bodyMessage([]byte(body)); got != want {
			t.Errorf("bodyMessage(%s) = %q, want %q", body, got, want)
		}
	}
	p := &Provider{key: testKey}
	long := strings.Repeat("é", maxMessage)
	if got := p.clean(long); len(got) > maxMessage+len("…") || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "éé") {
		t.Errorf("clean of a long message: %d bytes, %q...", len(got), got[:10])
	}
	if got := p.clean("bad\xffbyte " + testKey); got != "bad\uFFFDbyte [redacted]" {
		t.Errorf("clean = %q", got)
	}
	// A key across the cut leaves no prefix of itself behind.
	straddling := strings.Repeat("x", maxMessage-8) + testKey
	if got := p.clean(straddling); strings.Contains(got, testKey[:8]) {
		t.Errorf("clean kept part of the key: ...%q", got[len(got)-20:])
	}
}

package session_test

import (
	"errors"
	"fmt"

	"github.com/openrath/rath/session"
)

func ExampleSession_Fork() {
	s := session.FromSystem("You fix Go bugs.").Append(session.User("TestParse fails"))
	a := s.Fork().Append(session.Assistant("patch the lexer"))
	b := s.Fork().Append(session.Assistant("patch the parser"))
	fmt.Println(s.Len(), a.Len(), b.Len())
	fmt.Println(a.Lineage().Kind, a.Lineage().Parents[0] == s.ID())
	fmt.Println(a.Chunk(1).ID == b.Chunk(1).ID, a.Chunk(2).ID == b.Chunk(2).ID)
	// Output:
	// 2 3 3
	// fork true
	// true false
}

func ExampleSession_Merge() {
	s := session.FromUser("find the flaky test")
	a := s.Fork().Append(session.Note("TestA is flaky"))
	b := s.Fork().Append(session.Note("TestB is fine"))
	m, err := a.Merge(b)
	if err != nil {
		panic(err)
	}
	for _, c := range m.All() {
		fmt.Printf("%-5s %-14q origin=%v\n", c.Kind, c.Text(), c.Origin != "")
	}
	fmt.Println(m.Lineage().Extras["common_prefix"], m.Verify() == nil)
	// Output:
	// user  "find the flaky test" origin=false
	// note  "TestA is flaky" origin=false
	// note  "TestB is fine" origin=true
	// 1 true
}

func ExampleSession_Transcript() {
	s := session.FromSystem("Be brief.").Append(
		session.User("2+2?"),
		session.Assistant("", session.NewToolCall("c1", "calc", `{"expr":"2+2"}`)),
		session.Result(session.ToolResult{CallID: "c1", Tool: "calc", Content: "4"}),
		session.Assistant("4"),
	)
	for _, m := range s.Transcript() {
		fmt.Println(m.Role, m.Content, len(m.ToolCalls))
	}
	// Output:
	// system Be brief. 0
	// user 2+2? 0
	// assistant  1
	// tool 4 0
	// assistant 4 0
}

func ExampleSession_Verify() {
	s := session.FromUser("deploy v2").Append(session.Note("approved by ops"))
	fmt.Println(s.Verify())

	// A chunk altered after sealing keeps its old id: reassembling the chain
	// succeeds (the links still match) but Verify recomputes every hash.
	chunks := make([]session.Chunk, 0, s.Len())
	for _, c := range s.All() {
		chunks = append(chunks, c)
	}
	chunks[1].Note = &session.Text{Text: "approved by nobody"}
	t, err := session.Assemble(s.ID(), s.Lineage(), chunks)
	if err != nil {
		panic(err)
	}
	var ve *session.VerifyError
	err = t.Verify()
	if errors.As(err, &ve) {
		fmt.Println("chunk", ve.Index, "altered:", ve.What, "mismatch")
	}
	// Output:
	// <nil>
	// chunk 1 altered: id mismatch
}

// Package model is the runtime's view of a language model: a Request built
// from a session's transcript, a streaming call that yields typed events,
// and the Response the agent records in a model_call chunk.
//
// Providers (model/openai, model/anthropic, model/scripted) implement
// Provider, which performs one attempt of a call. New wraps a Provider into
// a Model that retries failed attempts (reporting every one), charges a
// Budget carried in the context, and prices usage. Names such as
// "openai:gpt-5.5" resolve through a registry (Register, Open) and the
// configuration chain explicit > environment > config file (see Config).
package model

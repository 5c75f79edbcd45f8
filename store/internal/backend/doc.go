// Package backend is what the store backends share beneath the Store
// interface: the segment format that packs a run of a chain's chunks into
// one row, lanes (a session's chunks as segments over shared bases) and
// their walking and verification, bounded loads, the lineage graph walks,
// the streaming decoder and the hub that fans commit events out to
// watchers. Users of a store need none of it.
package backend

package index

import (
	"fmt"
	"maps"
	"slices"

	"github.com/perflog/perflog/config"
	"github.com/perflog/perflog/internal/wire"
	"github.com/perflog/perflog/provenance"
)

// The launch walk of each recipe (launch_states) is written with package
// wire like the other stored answers; TestLaunchWireFields fails when one
// of its types gains a field this file does not encode. A version's Seq
// and a log item's position are not stored: they are the history's,
// found again when the walk is read.

// launchWireVersion begins every encoded walk.
const launchWireVersion = 3

func encodeLaunchState(st *provenance.LaunchState) ([]byte, error) {
	w := &wire.Writer{}
	w.Uvarint(launchWireVersion)
	w.String(st.Version)
	w.String(st.Key)
	w.String(st.Through)
	w.Len(len(st.Versions), st.Versions == nil)
	for i := range st.Versions {
		v := &st.Versions[i]
		w.String(v.Commit)
		w.String(v.Key)
		w.Len(len(v.Fields), v.Fields == nil)
		for _, k := range slices.Sorted(maps.Keys(v.Fields)) {
			w.String(k)
			w.String(v.Fields[k])
		}
		w.Strings(v.Points)
		w.String(v.NotKnown)
	}
	w.Len(len(st.Watch), st.Watch == nil)
	for _, x := range st.Watch {
		w.String(x.Path)
		w.Bool(x.List)
		w.String(x.ID)
	}
	w.Len(len(st.Blame), st.Blame == nil)
	for i := range st.Blame {
		if err := putBlameField(w, &st.Blame[i]); err != nil {
			return nil, err
		}
	}
	w.Len(len(st.Log), st.Log == nil)
	for i := range st.Log {
		if err := putLogItem(w, &st.Log[i]); err != nil {
			return nil, err
		}
	}
	return w.B, nil
}

func putLogItem(w *wire.Writer, it *provenance.LogItem) error {
	if err := putCommitRef(w, &it.CommitRef); err != nil {
		return err
	}
	w.String(it.Key)
	w.String(string(it.Kind))
	w.String(it.From)
	w.Len(len(it.Changes), it.Changes == nil)
	for _, c := range it.Changes {
		w.String(string(c.Kind))
		w.String(c.Path)
		w.String(c.OldPath)
		w.String(c.Old)
		w.String(c.New)
		w.String(c.Reach)
		w.String(c.NotKnownFrom)
	}
	w.Len(len(it.Entries), it.Entries == nil)
	for _, e := range it.Entries {
		w.String(string(e.Event))
		w.Strings(e.ConfigKeys)
		w.Strings(e.Description)
		w.String(e.PRLink)
	}
	w.Bool(it.MissingEntry)
	return nil
}

// decodeLaunchState decodes what encodeLaunchState wrote. It adopts data
// (wire.Adopt): the walk's strings share it.
func decodeLaunchState(data []byte) (*provenance.LaunchState, error) {
	r := wire.Adopt(data)
	if v := r.Uvarint(); r.Err() == nil && v != launchWireVersion {
		return nil, fmt.Errorf("%w: launch encoding %d", wire.ErrCorrupt, v)
	}
	st := &provenance.LaunchState{Version: r.String(), Key: r.String(), Through: r.String()}
	st.Versions = wire.List(r, 3, func() provenance.LaunchVersion {
		v := provenance.LaunchVersion{Commit: r.String(), Key: r.String()}
		if n, isNil := r.Len(2); !isNil && r.Err() == nil {
			v.Fields = make(map[string]string, n)
			for range n {
				k := r.String()
				v.Fields[k] = r.String()
			}
		}
		v.Points, v.NotKnown = r.Strings(), r.String()
		return v
	})
	st.Watch = wire.List(r, 3, func() provenance.Watched {
		return provenance.Watched{Path: r.String(), List: r.Bool(), ID: r.String()}
	})
	st.Blame = getBlameFields(r)
	st.Log = wire.List(r, 11, func() provenance.LogItem {
		it := provenance.LogItem{CommitRef: getCommitRef(r), Key: r.String(), Kind: provenance.EventKind(r.String()), From: r.String()}
		it.Changes = wire.List(r, 6, func() provenance.FieldChange {
			return provenance.FieldChange{Kind: config.ChangeKind(r.String()), Path: r.String(), OldPath: r.String(),
				Old: r.String(), New: r.String(), Reach: r.String(), NotKnownFrom: r.String()}
		})
		it.Entries = wire.List(r, 4, func() provenance.LogEntry {
			return provenance.LogEntry{Event: provenance.EventKind(r.String()), ConfigKeys: r.Strings(),
				Description: r.Strings(), PRLink: r.String()}
		})
		it.MissingEntry = r.Bool()
		return it
	})
	if err := r.Done(); err != nil {
		return nil, err
	}
	return st, nil
}

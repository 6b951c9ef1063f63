package trj

import (
	"bytes"
	"encoding/json"

	"github.com/trjgo/trj/internal/jsonfloat"
)

// trj's JSON convention: snake_case keys, and a float that is not finite
// written as the string "NaN", "+Inf" or "-Inf" (pipeline.Float), so that
// a write never fails because of a value. The structs below keep float64
// fields; their MarshalJSON methods shadow those fields with jsonfloat
// forms (a field of the outer struct hides the embedded one of the same
// name).

// resultJSON is Result's JSON form: the fields whose floats may not be
// finite shadow Result's (a field of the outer struct hides the embedded
// one of the same name), and Bridge, Evidence and ModelEvidence are
// written through their own JSON forms, so that they need no methods of
// their own.
type resultJSON struct {
	*plainResult
	Prior         jsonfloat.Slice  `json:"prior"`
	Jump          jsonfloat.Matrix `json:"jump,omitempty"`
	Bridge        *bridgeJSON      `json:"bridge,omitempty"`
	Evidence      *evidenceJSON    `json:"evidence,omitempty"`
	ModelEvidence *evidenceJSON    `json:"model_evidence,omitempty"`
}

type plainResult Result

// MarshalJSON writes r in trj's JSON convention.
func (r Result) MarshalJSON() ([]byte, error) {
	j := resultJSON{plainResult: (*plainResult)(&r), Prior: r.Prior, Jump: r.Jump}
	if r.Bridge != nil {
		j.Bridge = newBridgeJSON(r.Bridge)
	}
	if e := r.Evidence; e != nil {
		j.Evidence = &evidenceJSON{e.LogZ, e.LogZSE, e.P, e.SE}
	}
	if e := r.ModelEvidence; e != nil {
		j.ModelEvidence = &evidenceJSON{e.LogZ, e.LogZSE, e.P, e.SE}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes, and results written before
// trj's JSON keys were snake_case (see legacyKeys).
func (r *Result) UnmarshalJSON(b []byte) error {
	b, err := fromLegacy(b)
	if err != nil {
		return err
	}
	j := resultJSON{plainResult: (*plainResult)(r)}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	r.Prior, r.Jump = j.Prior, j.Jump
	r.Bridge, r.Evidence, r.ModelEvidence = nil, nil, nil
	if j.Bridge != nil {
		r.Bridge = j.Bridge.bridge()
	}
	if e := j.Evidence; e != nil {
		r.Evidence = &Evidence{LogZ: e.LogZ, LogZSE: e.LogZSE, P: e.P, SE: e.SE}
	}
	if e := j.ModelEvidence; e != nil {
		r.ModelEvidence = &ModelEvidence{LogZ: e.LogZ, LogZSE: e.LogZSE, P: e.P, SE: e.SE}
	}
	return nil
}

type plainBridge Bridge

// bridgeJSON is Bridge's JSON form.
type bridgeJSON struct {
	plainBridge
	Raw          jsonfloat.Slice  `json:"raw"`
	Normalized   jsonfloat.Slice  `json:"normalized"`
	RawSE        jsonfloat.Slice  `json:"raw_se"`
	NormalizedSE jsonfloat.Slice  `json:"normalized_se"`
	AcceptESS    jsonfloat.Matrix `json:"accept_ess"`
	MinAcceptESS jsonfloat.Float  `json:"min_accept_ess"`
	Balance      jsonfloat.Slice  `json:"balance,omitempty"`
	BalanceSE    jsonfloat.Slice  `json:"balance_se,omitempty"`
}

func newBridgeJSON(b *Bridge) *bridgeJSON {
	return &bridgeJSON{plainBridge(*b), b.Raw, b.Normalized, b.RawSE, b.NormalizedSE, b.AcceptESS, jsonfloat.Float(b.MinAcceptESS), b.Balance, b.BalanceSE}
}

func (j *bridgeJSON) bridge() *Bridge {
	b := Bridge(j.plainBridge)
	b.Raw, b.Normalized, b.RawSE, b.NormalizedSE = j.Raw, j.Normalized, j.RawSE, j.NormalizedSE
	b.AcceptESS, b.MinAcceptESS, b.Balance, b.BalanceSE = j.AcceptESS, float64(j.MinAcceptESS), j.Balance, j.BalanceSE
	return &b
}

// evidenceJSON is the JSON form of Evidence and of ModelEvidence (whose
// Estimates are not written).
type evidenceJSON struct {
	LogZ   jsonfloat.Slice `json:"log_z"`
	LogZSE jsonfloat.Slice `json:"log_z_se"`
	P      jsonfloat.Slice `json:"p"`
	SE     jsonfloat.Slice `json:"se"`
}

// legacyKeys are the keys of results written before trj's JSON keys were
// snake_case that case-insensitive matching does not find under their
// new names ("Labels" finds "labels", "LogZSE" does not find "log_z_se").
var legacyKeys = map[string]string{
	"AcceptESS": "accept_ess", "BalanceSE": "balance_se", "BridgeError": "bridge_error",
	"ESSFraction": "ess_fraction", "HeldOutLogLik": "held_out_log_lik", "HeldOutSE": "held_out_se",
	"LogZ": "log_z", "LogZSE": "log_z_se", "MinAcceptESS": "min_accept_ess", "MinFrom": "min_from",
	"MinTo": "min_to", "ModelEvidence": "model_evidence", "ModelEvidenceError": "model_evidence_error",
	"NormalizedSE": "normalized_se", "NumChains": "num_chains", "NumModels": "num_models", "RawSE": "raw_se",
}

// fromLegacy returns the JSON of a result, b, with the keys of a result
// written before trj's JSON keys were snake_case (one whose "Fingerprint"
// is capitalised) renamed (legacyKeys); b itself otherwise. Numbers are
// kept as written.
func fromLegacy(b []byte) ([]byte, error) {
	var head map[string]json.RawMessage
	if json.Unmarshal(b, &head) != nil {
		return b, nil // not an object: the decoder says why
	}
	if _, old := head["Fingerprint"]; !old {
		return b, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(renameLegacy(v))
}

// renameLegacy returns the decoded JSON value v with its legacy keys
// renamed at every depth.
func renameLegacy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if n, ok := legacyKeys[k]; ok {
				k = n
			}
			out[k] = renameLegacy(e)
		}
		return out
	case []any:
		for i := range x {
			x[i] = renameLegacy(x[i])
		}
	}
	return v
}

package changelog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/perflog/perflog/changelog/claims"
	"github.com/perflog/perflog/recipe"
)

// claimsDigest pins what claims.Extract reads from every bullet of the
// shipped sample's changelog (with the options its scripts pass at HEAD
// since version 11), for claims.Version.
var claimsDigest = map[string]string{
	"2":  "851e7c015974239b",
	"3":  "851e7c015974239b", // the same reading, judged by the launches of the introducing commit
	"4":  "8b1084394e396e77", // NAME=VALUE after a comparison is a bound, not a variable set
	"5":  "972c1dc20412e227", // values stated with a name: "from A to B", "A -> B", "raise X to B", a bullet opening with "--x B", "X stays B"; a removal said after the name ("X=1 dropped"); a bracketed list "[48, 72, 96]" is every item; an option named by the end of its name with the change it states ("num-draft-tokens 4→6"); an aside after " — " is a clause
	"6":  "972c1dc20412e227", // the same reading; a negated conditional claim no dry run can decide is unverified, not contradicted by the text, nor is a removal by a changed file of another recipe
	"7":  "82c4a2b50f2683a2", // a flag written as an option with no verb ("serve flags: --block-size 128") is contradicted by a launch of another value, or by no file of either side having it; a bullet's one range is about the rows it names ("add tp4 ep4 entries (conc 32-256)") and every touched one of them, its parallelisms listed right before it however many; "same" says the rows stayed only as "same conc/range/sweep/rows"; "radix cache disabled", "--a & --b is no longer available" are removals; a re-run's "from A" is the original's
	"8":  "81f9927013ff850c", // read against the history (12 new contradictions, 5 false): ranges take a bullet's plain tp/ep rows only when they stand right before the range, never DEP/TEP names nor "non-" rows; an option in a story or in what was not done is no mention; a plain word or a variable's name after an option is no value
	"9":  "99b23b22d8d17446", // recall by mutation: a name in a comment is not what runs; ", which" and dash asides speak in their sentence's voice; "throughput runs" is no measurement; an option without dashes governed by a verb states its value; another file's setting ("x.sh's X=1") and a backend's name ("TRITON_UNFUSED fallback") are no claims
	"10": "a71cb7f9d91696f4", // a possessive makes another file's setting only when it names a file (x.sh's, a_b's), not an arm (TP8's)
	"11": "41ff7bb8f864cac5", // features named in English ("EPLB", "CUDA graphs", "prefix caching disabled") are read as the options the scripts switch them with; confirmations say at which points
	"12": "41ff7bb8f864cac5", // the same reading; a removal the launches deny (no point lost it) is contradicted, a JSON value is compared as JSON, and a range paired with its own rows in a bullet of several ranges speaks of every touched row of them
	"13": "41ff7bb8f864cac5", // the same reading of the sample; a condition on DP attention ("when DP_ATTENTION=true", "dp-attn=false") is read of each point
	"14": "41ff7bb8f864cac5", // the same reading of the sample; a range qualified by sequence lengths alone speaks of DP-attention rows too; rows joined to a range by "over"/"at", or named in another sentence, no longer keep it a claim about some row
	"15": "a4c8bf3fb2d246c3", // a root cause ruled out ("not --async-scheduling, which was tried and ruled out"), garbled output: a story, whose removals are no claims
	"16": "a4c8bf3fb2d246c3", // the same reading of the sample; "or" between comparisons starts an alternative ("when DP_ATTENTION=true or CONC>=64")
	"17": "a4c8bf3fb2d246c3", // the same reading; "Set X" of a variable the files only read or name is unverified, not confirmed
	"18": "f22851f965456be6", // multi-node layouts ("1P2D", "2P-TP4/1D-TP4") qualify rows (never called wrong by themselves, and set aside when no row has them: they may count nodes), a range in parentheses after one is about it; "unchanged"/"keeps" and offload arms keep a range about some row only in its own sentence
	"19": "54b6f09f9d068467", // an option named as passed at times ("conditional --x", "optionally pass --x", "--x when set") is no launch claim; an option a server may pass unread (flags a program the sandbox does not run printed) is not known absent: the files decide
	"20": "7bc80a488a9446f0", // a determiner ("no", "without") negates the names it stands before, not settings after a comma ("no EP, dp-attn off, X=1"); "A=1/B=1" is two settings; "with and without dp-attn" restricts no row; "dp-attn off" is dp-attn false; "X is omitted" removes X
	"21": "7bc80a488a9446f0", // the same reading; a variable absent from a server that exported what a program printed (Command.HiddenEnv) is not known absent: the files decide
	"22": "964163f6d9a55ac4", // a range after its rows counts the words between without sequence lengths and "and"/"for"/"at" ("1P+1D TP8/EP1 CI smoke sweep for 1k1k and 8k1k (conc 8-512)")
	"23": "964163f6d9a55ac4", // "conc from [1, 4, 8] to [1, 2, 4, 8]": lists on either side, the old one checked against the base's rows (the sample has none)
	"24": "964163f6d9a55ac4", // the same reading; an option and its plain word that are one item of a list of options ("…: --load-format fastsafetensors, --moe-backend auto") are a value: another literal contradicts it
	"25": "964163f6d9a55ac4", // the same reading; an image a clause opens with ("Use IMAGE because …", "Image IMAGE (pushed …): …") is what runs, whatever story follows
	"26": "964163f6d9a55ac4", // the same reading; "X is omitted", "no X" (X right after it), "without X" say what the listed recipes run without, so a new recipe that launches X contradicts them ("remove X" of a new recipe may be of the one it was copied from)
	"27": "964163f6d9a55ac4", // the same reading; a removal said with no scope ("Remove --x") is contradicted by points that still launch it though the change removed it from others; a variable set only by a benchmark script or launcher that runs none of the listed recipes, or read by them and set by nothing (no file, no point's workflow environment), is contradicted
	"28": "e5aac30e73e44a2b", // a bullet's sequence-length label ("8k1k: …") narrows each of its ranges; "unchanged" in another dash clause leaves a range paired with rows about every touched one; rows named a few words before the range ("1P+1D TP8/EP1 CI smoke sweep for 1k1k and 8k1k (conc 8-512)") or in an aside before a range of sequence lengths are its rows; a qualifier naming a side's parallelisms together ("dep8 decode") matches one side of a multi-node row, not its sides read across
	"29": "e5aac30e73e44a2b", // the same reading; a conditional setting judged with only the head dry-run (the audit) is unverified when points outside the condition launch it too
	"30": "e5aac30e73e44a2b", // the same reading; an option "added" that only a benchmark script no launcher runs, or a launcher of other runners, passes is contradicted, as a variable is since v27
}

// TestClaimsVersionPinned: a change to how claims are read changes the
// digest; it must come with a new claims.Version, or indexes keep serving
// the checks of the old reading.
func TestClaimsVersionPinned(t *testing.T) {
	r := openCorpus(t)
	head, err := r.Resolve("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := r.ReadFile(head, "perf-changelog.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, root, err := parseWithRoot("perf-changelog.yaml", raw)
	if err != nil {
		t.Fatal(err)
	}
	// the options the sample's scripts pass: words of the bullets are read
	// as options, and features as the options that switch them, by them
	opts := recipe.NewRev("HEAD", r.Tree(head), nil).Options()
	vocab := func(w string) bool { return opts[w] }
	h := sha256.New()
	enc := json.NewEncoder(h)
	n := 0
	for _, e := range root.Items {
		cs := claims.ExtractIn(stringsOf(e, "description"), vocab)

		n += len(cs)
		if err := enc.Encode(cs); err != nil {
			t.Fatal(err)
		}
	}
	if n < 1000 {
		t.Fatalf("only %d claims read from %d entries", n, len(root.Items))
	}
	got := hex.EncodeToString(h.Sum(nil))[:16]
	want, ok := claimsDigest[claims.Version]
	if !ok || got != want {
		t.Fatalf("claims read from the sample changelog have digest %s; claims.Version %q pins %q.\n"+
			"If the reading changed on purpose, bump claims.Version (changelog/claims/extract.go) and pin the new digest here.", got, claims.Version, want)
	}
}

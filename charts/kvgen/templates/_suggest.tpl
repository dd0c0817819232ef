{{/*
kvgen.suggest: the "did you mean" of a hint, the same choice as kvgen/core/errors.py suggest (Python's
difflib.get_close_matches(word, choices, n=1, cutoff=0.6), case-insensitive): the choice whose
SequenceMatcher ratio 2*M/T is highest and at least 0.6 (ties: the larger string), where M counts
the characters of the matching blocks (the longest common substring, then recursively left and
right of it) and T both lengths. The cheap upper bounds difflib tries first (real_quick_ratio,
quick_ratio) skip most choices here too; they never change the result. Prints the choice as
written, or nothing.
Usage: {{ include "kvgen.suggest" (list "Standard_NC24ads_A100_v5" (keys $instances)) }}
*/}}
{{- define "kvgen.suggest" -}}
{{- $word := lower (toString (index . 0)) -}}
{{- $lowered := dict -}}
{{- range $c := index . 1 -}}{{- $_ := set $lowered (lower (toString $c)) (toString $c) -}}{{- end -}}
{{- $b := splitList "" $word -}}
{{- $lb := len $b -}}
{{/* b2j: each character of the word -> its positions; difflib's autojunk drops characters
     more frequent than 1% + 1 from it in a word of 200 or more */}}
{{- $b2j := dict -}}
{{- $count := dict -}}
{{- range $j, $ch := $b -}}
{{- $_ := set $b2j $ch (append (default list (get $b2j $ch)) $j) -}}
{{- $_ := set $count $ch (add1 (default 0 (get $count $ch))) -}}
{{- end -}}
{{- if ge $lb 200 -}}
{{- $ntest := add1 (div $lb 100) -}}
{{- range $ch, $n := $count -}}{{- if gt (int64 $n) $ntest -}}{{- $_ := unset $b2j $ch -}}{{- end -}}{{- end -}}
{{- end -}}
{{- $best := "" -}}
{{- $bestScore := 0.0 -}}
{{- range $x := keys $lowered | sortAlpha -}}
{{- $a := splitList "" $x -}}
{{- $la := len $a -}}
{{- $T := add $la $lb -}}
{{- $ok := true -}}
{{- if gt $T 0 -}}
{{/* real_quick_ratio, then quick_ratio (a multiset intersection) */}}
{{- $ok = ge (divf (mul 2 (min $la $lb)) $T) 0.6 -}}
{{- if $ok -}}
{{- $avail := dict -}}
{{- $m := 0 -}}
{{- range $ch := $a -}}
{{- $n := int64 (default 0 (get $count $ch)) -}}
{{- if hasKey $avail $ch -}}{{- $n = int64 (get $avail $ch) -}}{{- end -}}
{{- $_ := set $avail $ch (sub $n 1) -}}
{{- if gt $n 0 -}}{{- $m = add1 $m -}}{{- end -}}
{{- end -}}
{{- $ok = ge (divf (mul 2 $m) $T) 0.6 -}}
{{- end -}}
{{- end -}}
{{- if $ok -}}
{{/* ratio: the matching blocks, found as difflib's get_matching_blocks finds them */}}
{{- $M := 0 -}}
{{- $queue := list (list 0 $la 0 $lb) -}}
{{- range $_step := until (int (add 2 (mul 2 $la))) -}}
{{- if $queue -}}
{{- $q := last $queue -}}
{{- $queue = initial $queue -}}
{{- $alo := index $q 0 -}}{{- $ahi := index $q 1 -}}{{- $blo := index $q 2 -}}{{- $bhi := index $q 3 -}}
{{- $besti := $alo -}}{{- $bestj := $blo -}}{{- $size := 0 -}}
{{- $j2len := dict -}}
{{- range $i := untilStep (int $alo) (int $ahi) 1 -}}
{{- $next := dict -}}
{{- range $j := default list (get $b2j (index $a $i)) -}}
{{- if lt $j $blo -}}{{- continue -}}{{- end -}}
{{- if ge $j $bhi -}}{{- break -}}{{- end -}}
{{- $k := add1 (default 0 (get $j2len (toString (sub $j 1)))) -}}
{{- $_ := set $next (toString $j) $k -}}
{{- if gt $k $size -}}{{- $besti = add1 (sub $i $k) -}}{{- $bestj = add1 (sub $j $k) -}}{{- $size = $k -}}{{- end -}}
{{- end -}}
{{- $j2len = $next -}}
{{- end -}}
{{/* extend over characters autojunk dropped (a no-op otherwise) */}}
{{- range $_n := until $la -}}
{{- if and (gt $besti $alo) (gt $bestj $blo) (eq (index $a (sub $besti 1)) (index $b (sub $bestj 1))) -}}
{{- $besti = sub $besti 1 -}}{{- $bestj = sub $bestj 1 -}}{{- $size = add1 $size -}}
{{- else -}}{{- break -}}{{- end -}}
{{- end -}}
{{- range $_n := until $la -}}
{{- if and (lt (add $besti $size) $ahi) (lt (add $bestj $size) $bhi) (eq (index $a (add $besti $size)) (index $b (add $bestj $size))) -}}
{{- $size = add1 $size -}}
{{- else -}}{{- break -}}{{- end -}}
{{- end -}}
{{- if gt $size 0 -}}
{{- $M = add $M $size -}}
{{- if and (lt $alo $besti) (lt $blo $bestj) -}}{{- $queue = append $queue (list $alo $besti $blo $bestj) -}}{{- end -}}
{{- if and (lt (add $besti $size) $ahi) (lt (add $bestj $size) $bhi) -}}{{- $queue = append $queue (list (add $besti $size) $ahi (add $bestj $size) $bhi) -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $score := 1.0 -}}
{{- if gt $T 0 -}}{{- $score = divf (mul 2 $M) $T -}}{{- end -}}
{{- if and (ge $score 0.6) (or (gt $score $bestScore) (and (eq $score $bestScore) (gt $x $best))) -}}
{{- $best = $x -}}{{- $bestScore = $score -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $best -}}{{- index $lowered $best -}}{{- end -}}
{{- end -}}

{{/*
kvgen.nearTypo: the "did you mean" of an unknown model or instance type, the same choice as
kvgen/core/errors.py near_typo: a choice whose words and numbers (runs of ASCII letters, lowercase,
and runs of digits; any other character separates them) are the word's, except at most one word one
typo apart (kvgen.oneTypo), every number equal. An exact match of the words wins, else the first
typo in sorted order. Prints the choice as written, or nothing.
Usage: {{ include "kvgen.nearTypo" (list "g5.12xlage" (keys $instances)) }}
*/}}
{{- define "kvgen.nearTypo" -}}
{{- $tokens := list -}}
{{- range $t := regexFindAll "[A-Za-z]+|[0-9]+" (toString (index . 0)) -1 -}}{{- $tokens = append $tokens (lower $t) -}}{{- end -}}
{{- $exact := "" -}}
{{- $typo := "" -}}
{{- $hasExact := false -}}
{{- $hasTypo := false -}}
{{- range $choice := sortAlpha (index . 1) -}}
{{- $other := list -}}
{{- range $t := regexFindAll "[A-Za-z]+|[0-9]+" $choice -1 -}}{{- $other = append $other (lower $t) -}}{{- end -}}
{{- if and (not $hasExact) (eq (len $other) (len $tokens)) -}}
{{- $differ := list -}}
{{- range $i, $a := $tokens -}}{{- if ne $a (index $other $i) -}}{{- $differ = append $differ (list $a (index $other $i)) -}}{{- end -}}{{- end -}}
{{- if not $differ -}}
{{- $exact = $choice -}}{{- $hasExact = true -}}
{{- else if and (not $hasTypo) (eq (len $differ) 1) -}}
{{- $a := index $differ 0 0 -}}
{{- $b := index $differ 0 1 -}}
{{- if and (not (regexMatch "^[0-9]" $a)) (not (regexMatch "^[0-9]" $b)) (include "kvgen.oneTypo" (list $a $b)) -}}{{- $typo = $choice -}}{{- $hasTypo = true -}}{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $hasExact -}}{{- $exact -}}{{- else -}}{{- $typo -}}{{- end -}}
{{- end -}}

{{/*
kvgen.oneTypo: "true" when two different words are one typo apart (kvgen/core/errors.py _one_typo):
two neighbours swapped, or one letter doubled (or undoubled); in words of at least 4 letters also one
letter dropped, added or changed.
*/}}
{{- define "kvgen.oneTypo" -}}
{{- $a := index . 0 -}}
{{- $b := index . 1 -}}
{{- if gt (len $a) (len $b) -}}{{- $t := $a -}}{{- $a = $b -}}{{- $b = $t -}}{{- end -}}
{{- $i := 0 -}}
{{- range $k := until (len $a) -}}
{{- if eq (substr (int $k) (int (add1 $k)) $a) (substr (int $k) (int (add1 $k)) $b) -}}{{- $i = add1 $k -}}{{- else -}}{{- break -}}{{- end -}}
{{- end -}}
{{- $ok := false -}}
{{- if eq (len $a) (len $b) -}}
{{- if lt (add1 $i) (len $a) -}}
{{- if and (eq (substr (int $i) (int (add1 $i)) $a) (substr (int (add1 $i)) (int (add $i 2)) $b)) (eq (substr (int (add1 $i)) (int (add $i 2)) $a) (substr (int $i) (int (add1 $i)) $b)) (eq (substr (int (add $i 2)) -1 $a) (substr (int (add $i 2)) -1 $b)) -}}{{- $ok = true -}}{{- end -}}
{{- end -}}
{{- if and (ge (len $a) 4) (eq (substr (int (add1 $i)) -1 $a) (substr (int (add1 $i)) -1 $b)) -}}{{- $ok = true -}}{{- end -}}
{{- else if and (eq (len $b) (add1 (len $a))) (eq (substr (int $i) -1 $a) (substr (int (add1 $i)) -1 $b)) -}}
{{- $c := substr (int $i) (int (add1 $i)) $b -}}
{{- if or (ge (len $a) 4) (and (gt $i 0) (eq (substr (int (sub $i 1)) (int $i) $b) $c)) (and (lt (add1 $i) (len $b)) (eq (substr (int (add1 $i)) (int (add $i 2)) $b) $c)) -}}{{- $ok = true -}}{{- end -}}
{{- end -}}
{{- if $ok -}}true{{- end -}}
{{- end -}}

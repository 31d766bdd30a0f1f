//! Words for search: a title's words and a query's, folded the same way
//! ([`fold`]: Unicode compatibility decomposition, full case folding, the
//! accents of Latin, Greek and Cyrillic letters dropped; any character that
//! is not a letter, a digit or a kept mark separates words), and what a
//! query asks of a title.
//!
//! A title is searchable by its *indexed words*: its distinct folded words
//! but the [`STOP_WORDS`]. A query matches a title when every word but the
//! last (stop words left out) is an indexed word of the title and the last
//! word is the beginning of one (type-ahead: `blue cer` finds "Blue ceramic
//! mug"). The search index keeps, per listing, a posting under each indexed
//! word's first 1, 2 and [`PREFIX_CHARS`] characters ([`Term`]).
//!
//! A query's words, for its limits (at most [`MAX_QUERY_WORDS`], at least
//! one), are its runs of characters between ASCII characters that are not
//! letters or digits: a rule openapi.yaml states as a pattern exactly. Each
//! run is then folded like a title (so `½` is the words `1` and `2`, and a
//! run of symbols holds no word and matches nothing).

use std::collections::BTreeSet;

use ulid::Ulid;
use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;
use unicode_script::{Script, UnicodeScript};

/// The 25 most frequent English words (wordfreq's `top_n_list("en", 25)`):
/// neither indexed nor required. Each is in 2-22% of the titles of the test
/// corpus (`tests/data/search-titles.txt`); docs/search.md has the capacity
/// reasoning.
pub const STOP_WORDS: [&str; 25] = [
    "the", "to", "and", "of", "a", "in", "i", "is", "for", "that", "you", "it", "on", "with", "this", "was", "be",
    "as", "are", "have", "at", "he", "not", "by", "but",
];

/// The longest prefix term (a query's last word is looked up by its first
/// characters, at most this many).
pub const PREFIX_CHARS: usize = 3;
/// Longest query, in characters before folding.
pub const MAX_QUERY_CHARS: usize = 100;
/// Most words in a query: runs between ASCII separators (stop words
/// included; a run may fold into several words).
pub const MAX_QUERY_WORDS: usize = 6;
/// A folded word is cut to at most this many bytes (at a character
/// boundary; in titles and queries alike): compatibility decomposition can
/// make one character 18 bytes (`㌖` is `キロメートル`).
pub const MAX_WORD_BYTES: usize = 32;
/// A title is indexed by its first this many distinct indexed words (at
/// most 3 postings each).
pub const MAX_INDEXED_WORDS: usize = 24;
/// ... and by no more words than fit this many bytes together: each
/// posting carries them all (`words`), so a posting stays under 1 KB (one
/// write unit) whatever the title.
pub const MAX_INDEXED_BYTES: usize = 200;
/// Most posting lists a query names ([`Query::lists`]): the prefix's and
/// the longest required words' (any one list holds every match; a page
/// reads the heads of a few: `fanout::search`).
pub const MAX_LISTS: usize = 6;

/// Whether a combining mark on a letter of `script` is an accent (dropped):
/// Latin, Greek and Cyrillic. Any other script's marks (Indic and Thai vowel
/// signs, Japanese dakuten) are part of the word. Marks are of the
/// Inherited script, so the base letter decides.
fn is_accent_of(script: Script) -> bool {
    matches!(script, Script::Latin | Script::Greek | Script::Cyrillic)
}

/// A text's words, folded, in order (repeats kept): compatibility
/// decomposition (ligatures, widths, `㌖`), Unicode full case folding
/// (`Σ`, `ς` and `σ` alike; `ß` is `ss`), decomposed again, then a
/// combining mark dropped when its base letter is Latin, Greek or Cyrillic
/// and kept in the word otherwise; each word cut to [`MAX_WORD_BYTES`].
pub fn fold(text: &str) -> Vec<String> {
    let decomposed: String = text.nfkd().collect();
    let folded: String = caseless::default_case_fold_str(&decomposed).nfkd().collect();
    let mut words = Vec::new();
    let mut word = String::new();
    let mut base = Script::Common;
    for c in folded.chars() {
        if is_combining_mark(c) {
            // A mark on a letter of a word: kept unless an accent.
            if !word.is_empty() && !is_accent_of(base) {
                word.push(c);
            }
            continue;
        }
        base = c.script();
        if c.is_alphanumeric() {
            word.push(c);
        } else if !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    for w in &mut words {
        let mut at = MAX_WORD_BYTES.min(w.len());
        while !w.is_char_boundary(at) {
            at -= 1;
        }
        w.truncate(at);
    }
    words
}

/// Whether a folded word is a stop word.
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// A title's indexed words: distinct, folded, no stop words, the first
/// [`MAX_INDEXED_WORDS`] of them that fit [`MAX_INDEXED_BYTES`] together
/// (a space between two).
pub fn indexed(title: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut bytes = 0;
    for w in fold(title).into_iter().filter(|w| !is_stop_word(w)) {
        if out.len() == MAX_INDEXED_WORDS || bytes + w.len() > MAX_INDEXED_BYTES {
            break;
        }
        if !out.contains(&w) {
            bytes += w.len() + 1;
            out.insert(w);
        }
    }
    out
}

/// What a posting list is kept under: the first 1 to [`PREFIX_CHARS`]
/// characters of an indexed word (all of a shorter one). A word a query
/// requires is looked up by its first [`PREFIX_CHARS`] characters' list,
/// whose postings carry the title's words to filter by: a list of the word
/// alone would be a fourth posting per word, written at every creation,
/// sale and relisting (docs/search.md).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Term(String);

/// The lists a one-character prefix is split over, by listing: the
/// hottest lists (`s*` holds a quarter of all titles, so a quarter of every
/// listing's creation, sale and relisting is written there: over 1,000 WCU/s
/// below 1000x the mix as one list).
pub const PREFIX_SPLITS: u8 = 4;

impl Term {
    /// The term of a word's first `chars` characters.
    pub fn prefix(word: &str, chars: usize) -> Term {
        Term(word.chars().take(chars.min(PREFIX_CHARS)).collect())
    }

    /// Whether its postings are split over [`PREFIX_SPLITS`] lists.
    pub fn is_split(&self) -> bool {
        self.0.chars().count() == 1
    }

    /// The list `listing`'s posting is kept in: the prefix and `*` (never a
    /// word: words hold letters and digits only), and a split's number.
    pub fn key_for(&self, listing: Ulid) -> String {
        if self.is_split() {
            let split = listing.random() % u128::from(PREFIX_SPLITS);
            format!("{}*{split}", self.0)
        } else {
            format!("{}*", self.0)
        }
    }

    /// How many lists hold the term's postings: [`PREFIX_SPLITS`], or one.
    pub fn list_count(&self) -> usize {
        if self.is_split() {
            usize::from(PREFIX_SPLITS)
        } else {
            1
        }
    }

    /// The lists that together hold every posting of the term.
    pub fn list_keys(&self) -> Vec<String> {
        if self.is_split() {
            (0..PREFIX_SPLITS).map(|k| format!("{}*{k}", self.0)).collect()
        } else {
            vec![format!("{}*", self.0)]
        }
    }
}

/// The terms a title is posted under: its indexed words' first 1, 2 and 3
/// characters.
pub fn terms(indexed: &BTreeSet<String>) -> BTreeSet<Term> {
    let mut out = BTreeSet::new();
    for w in indexed {
        for n in 1..=PREFIX_CHARS.min(w.chars().count()) {
            out.insert(Term::prefix(w, n));
        }
    }
    out
}

/// Whether a character separates a query's words for its limits.
pub fn is_query_separator(c: char) -> bool {
    c.is_ascii() && !c.is_ascii_alphanumeric()
}

/// A parsed search query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    /// Words a title must hold (stop words left out), distinct.
    pub words: BTreeSet<String>,
    /// The beginning of a word a title must hold (the query's last word;
    /// empty when no run of the query holds a letter or digit: nothing
    /// matches).
    pub prefix: String,
}

/// Why a query cannot be searched.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// Longer than [`MAX_QUERY_CHARS`].
    #[error("q must be at most {MAX_QUERY_CHARS} characters")]
    TooLong,
    /// No word: only ASCII characters other than letters and digits.
    #[error("q must hold a word (a character that is not an ASCII space, punctuation or symbol)")]
    Empty,
    /// More than [`MAX_QUERY_WORDS`] words.
    #[error("q must be at most {MAX_QUERY_WORDS} words")]
    TooManyWords,
}

impl Query {
    /// Parses `q`.
    pub fn parse(q: &str) -> Result<Query, QueryError> {
        if q.chars().count() > MAX_QUERY_CHARS {
            return Err(QueryError::TooLong);
        }
        let runs: Vec<&str> = q.split(is_query_separator).filter(|r| !r.is_empty()).collect();
        if runs.is_empty() {
            return Err(QueryError::Empty);
        }
        if runs.len() > MAX_QUERY_WORDS {
            return Err(QueryError::TooManyWords);
        }
        let mut words: Vec<String> = runs.iter().flat_map(|r| fold(r)).collect();
        let prefix = words.pop().unwrap_or_default();
        Ok(Query { words: words.into_iter().filter(|w| !is_stop_word(w)).collect(), prefix })
    }

    /// Posting lists that hold every match: the longest required words'
    /// first [`PREFIX_CHARS`] characters' (at most [`MAX_LISTS`] - 1
    /// distinct: a run can fold into many words) and the last word's. Any
    /// one of them can be read to find every match (each holds them all).
    /// None when the query can match nothing.
    pub fn lists(&self) -> Vec<Term> {
        if self.prefix.is_empty() {
            return Vec::new();
        }
        let mut words: Vec<&String> = self.words.iter().collect();
        words.sort_by_key(|w| std::cmp::Reverse(w.chars().count()));
        let mut lists: Vec<Term> = Vec::new();
        for term in words.into_iter().map(|w| Term::prefix(w, PREFIX_CHARS)) {
            if lists.len() < MAX_LISTS - 1 && !lists.contains(&term) {
                lists.push(term);
            }
        }
        let last = Term::prefix(&self.prefix, PREFIX_CHARS);
        if !lists.contains(&last) {
            lists.push(last);
        }
        lists
    }

    /// Whether a title with these indexed words matches.
    pub fn matches(&self, indexed: &BTreeSet<String>) -> bool {
        !self.prefix.is_empty()
            && self.words.iter().all(|w| indexed.contains(w))
            && indexed.iter().any(|w| w.starts_with(&self.prefix))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(words: &[&str]) -> BTreeSet<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn folding_drops_accents_and_case_and_splits_at_punctuation() {
        assert_eq!(
            fold("Céramique BLEUE, l'été—ﬁne n°5 Straße"),
            ["ceramique", "bleue", "l", "ete", "fine", "n", "5", "strasse"]
        );
        assert_eq!(fold("  ...  "), Vec::<String>::new());
        assert_eq!(fold("Ǆemal ÅNGSTRÖM"), ["dzemal", "angstrom"]);
    }

    /// Issue 31: lowercasing is not case folding (final sigma), and a
    /// script's vowel signs are letters of its words, not accents.
    #[test]
    fn case_folding_and_only_accents_of_latin_greek_and_cyrillic_dropped() {
        let same = |a: &str, b: &str| assert_eq!(fold(a), fold(b), "{a} ~ {b}");
        let differ = |a: &str, b: &str| assert_ne!(fold(a), fold(b), "{a} !~ {b}");
        same("ΟΔΟΣ", "Οδός");
        same("οδος", "ΟΔΟΣ");
        assert!(Query::parse("ΟΔΟΣ").unwrap().matches(&indexed("Οδός Αθηνών")));
        assert!(Query::parse("οδος").unwrap().matches(&indexed("ΟΔΟΣ ΠΑΤΗΣΙΩΝ")));
        same("Straße", "STRASSE");
        same("Ёлка", "елка");
        differ("कुतुब", "किताब");
        differ("कोताबे", "किताब");
        differ("หนงสอ", "หนังสือ");
        assert!(!Query::parse("หนงสอ").unwrap().matches(&indexed("หนังสือ")));
        assert!(Query::parse("หนังสือ").unwrap().matches(&indexed("หนังสือ เก่า")));
        differ("が", "か");
        same("が", "か\u{3099}");
        assert_eq!(fold("หนังสือ").len(), 1, "a tone or vowel mark does not split a Thai word");
    }

    #[test]
    fn a_title_is_posted_under_its_words_prefixes_but_stop_words() {
        let words = indexed("The Blue ceramic mug, a mug for tea");
        assert_eq!(words, set(&["blue", "ceramic", "mug", "tea"]));
        let id = Ulid::from_parts(1, 6);
        let keys: Vec<String> = terms(&words).iter().map(|t| t.key_for(id)).collect();
        // One-character prefixes split by the listing's random bits (6 mod 4).
        assert_eq!(keys, ["b*2", "bl*", "blu*", "c*2", "ce*", "cer*", "m*2", "mu*", "mug*", "t*2", "te*", "tea*"]);
        assert_eq!(Term::prefix("s", 3).list_keys(), ["s*0", "s*1", "s*2", "s*3"]);
        assert_eq!(Term::prefix("sun", 3).list_keys(), ["sun*"]);
        // Every listing's key is one of its term's lists.
        for n in 0..64 {
            let t = Term::prefix("s", 1);
            assert!(t.list_keys().contains(&t.key_for(Ulid::from_parts(n, u128::from(n) * 7919))));
        }
    }

    #[test]
    fn a_query_needs_its_words_and_a_word_beginning_with_its_last() {
        let q = Query::parse("Blue CER").unwrap();
        assert_eq!(q, Query { words: set(&["blue"]), prefix: "cer".into() });
        assert_eq!(q.lists(), [Term::prefix("blu", 3), Term::prefix("cer", 3)]);
        assert!(q.matches(&indexed("Blue ceramic mug")));
        assert!(!q.matches(&indexed("Blue mug")));
        assert!(!q.matches(&indexed("Ceramic mug")));
        // Stop words are not required; a short last word is a short prefix.
        let q = Query::parse("mug of bl").unwrap();
        assert_eq!(q.lists(), [Term::prefix("mug", 3), Term::prefix("bl", 3)]);
        assert!(q.matches(&indexed("Blue mug")));
        // A word's list is its prefix's, once: `blues blue` reads `blu*`.
        assert_eq!(Query::parse("blues blue").unwrap().lists(), [Term::prefix("blu", 3)]);
        // Runs of the query are folded like titles: `½` is `1` and `2`.
        assert_eq!(Query::parse("½").unwrap(), Query { words: set(&["1"]), prefix: "2".into() });
        // A run with no letter or digit matches nothing.
        let q = Query::parse("——").unwrap();
        assert!(q.lists().is_empty() && !q.matches(&indexed("Anything")));
        assert!(Query::parse("céramique").unwrap().matches(&indexed("CERAMIQUE bleue")));
    }

    #[test]
    fn long_words_are_cut_many_words_capped_and_a_query_names_at_most_six_lists() {
        let long = "㌖".repeat(114);
        assert!(long.chars().count() <= 200);
        let words = indexed(&long);
        let word = words.iter().next().unwrap();
        assert!(word.len() <= MAX_WORD_BYTES && word.len() > MAX_WORD_BYTES - 4, "{word}: cut at a character");
        assert!(Query::parse(&"㌖".repeat(30)).unwrap().matches(&words), "cut alike in queries");
        let many: String = (0..60).map(|i| format!("w{i} ")).collect();
        assert_eq!(indexed(&many).len(), MAX_INDEXED_WORDS);
        // Words that expand: as many as fit the bytes of a posting.
        let expanding: String = (0..16).map(|i| format!("㌖{i} ")).collect();
        let words = indexed(&expanding);
        assert!(words.iter().map(|w| w.len() + 1).sum::<usize>() <= MAX_INDEXED_BYTES, "{words:?}");
        // One run (NBSP folds to a space) of many words.
        let q: String = (0..20).map(|i| format!("x{i}\u{a0}")).collect::<String>() + "end";
        let q = Query::parse(&q).unwrap();
        assert!(q.words.len() > 15);
        assert_eq!(q.lists().len(), MAX_LISTS);
    }

    #[test]
    fn bad_queries_are_refused() {
        assert_eq!(Query::parse(""), Err(QueryError::Empty));
        assert_eq!(Query::parse(" ,;- "), Err(QueryError::Empty));
        assert_eq!(Query::parse("a b c d e f g"), Err(QueryError::TooManyWords));
        assert_eq!(Query::parse("a_b_c_d_e_f_g"), Err(QueryError::TooManyWords));
        assert!(Query::parse("½ ½ ½ ½ ½ ½").is_ok(), "six runs, twelve words folded");
        assert_eq!(Query::parse("the of").unwrap().lists(), [Term::prefix("of", 3)]);
        assert_eq!(Query::parse(&"x".repeat(101)), Err(QueryError::TooLong));
        assert!(Query::parse(&"x".repeat(100)).is_ok());
        assert!(Query::parse("the mug").is_ok());
        // A stop word as the last word is still a prefix ("the" -> "theater").
        assert_eq!(Query::parse("the").unwrap().lists(), [Term::prefix("the", 3)]);
    }
}

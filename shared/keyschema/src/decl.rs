//! Declarations: each entity's primary key and every index it joins, as
//! templates over its fields, and everything derived from them: an item's
//! keys ([`EntityDecl::item_keys`]), a query's partition and sort-key
//! prefix from its leading composites ([`KeyDecl::query`]), the key moves
//! of a state change ([`EntityDecl::with_key_moves`]: setting a composite
//! recomputes or removes exactly the index keys that use it), and the
//! repairs of the indexes the stream processor keeps
//! ([`EntityDecl::repair`]).

use crate::change::{Change, Cond};
use crate::key::{ItemKeys, Key};
use crate::query::{KeyQuery, SortKey};
use crate::table::{EntityType, Index};
use crate::template::{self, TemplateError};

pub use crate::error::SchemaError;
use crate::value::{Attrs, Value};

/// Who writes an index's keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keeper {
    /// The API's write of the change, in the same request.
    Write,
    /// The stream processor, after the write (and a maintenance job).
    Stream,
    /// Both: the write, and the stream processor repairing drift.
    Both,
}

impl Keeper {
    /// Whether the API's write does it.
    pub const fn by_write(self) -> bool {
        matches!(self, Keeper::Write | Keeper::Both)
    }
    /// Whether the stream processor does it.
    pub const fn by_stream(self) -> bool {
        matches!(self, Keeper::Stream | Keeper::Both)
    }
}

/// Who adds an index's keys (an item enters it), who removes them (it
/// leaves), and who moves them (a composite changes while it stays).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keeping {
    /// Who adds the keys.
    pub adds: Keeper,
    /// Who removes them.
    pub removes: Keeper,
    /// Who moves them.
    pub moves: Keeper,
    /// Who moves the sort key alone (a change of its composites and none of
    /// the partition key's), in the index or not: out of it, the sort key
    /// joins nothing (an entry needs both keys) until both are added.
    pub moves_sort_key: Keeper,
}

/// An index kept by the writes alone.
pub const BY_WRITE: Keeping =
    Keeping { adds: Keeper::Write, removes: Keeper::Write, moves: Keeper::Write, moves_sort_key: Keeper::Write };

/// A key on one index as two templates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyDecl {
    /// The table or a GSI.
    pub index: Index,
    /// Partition key template.
    pub pk: &'static str,
    /// Sort key template.
    pub sk: &'static str,
}

/// Values of composites, by field name.
pub type Parts<'a> = &'a [(&'a str, Value)];

fn in_parts<'a>(parts: Parts<'a>) -> impl Fn(&str) -> Option<Value> + 'a {
    move |f| parts.iter().find(|(k, _)| *k == f).map(|(_, v)| v.clone())
}

/// An item's fields, with the entity's declared defaults where it lacks one.
fn in_attrs<'a>(attrs: &'a Attrs, defaults: Defaults) -> impl Fn(&str) -> Option<Value> + 'a {
    move |f| {
        attrs.get(f).cloned().or_else(|| defaults.iter().find(|(d, _)| *d == f).map(|(_, v)| Value::N((*v).to_owned())))
    }
}

/// Fields added to an entity after items of it were written, each with the
/// (numeric) value those items stand for: a key that reads the field reads
/// this when the item has none, so old items keep a key without a rewrite.
pub type Defaults = &'static [(&'static str, &'static str)];

impl KeyDecl {
    /// The fields its templates read, partition key first.
    pub fn fields(&self) -> Vec<&'static str> {
        self.pk_fields().chain(self.sk_fields()).collect()
    }

    /// The fields its partition key template reads.
    pub fn pk_fields(&self) -> impl Iterator<Item = &'static str> {
        template::composites(self.pk).into_iter()
    }

    /// The fields its sort key template reads.
    pub fn sk_fields(&self) -> impl Iterator<Item = &'static str> {
        template::composites(self.sk).into_iter()
    }

    /// The key, from every composite's value.
    pub fn render(&self, value_of: &dyn Fn(&str) -> Option<Value>) -> Result<Key, TemplateError> {
        Ok(Key::new(template::render(self.pk, value_of)?, template::render(self.sk, value_of)?))
    }

    /// The value of composite `field` in a sort key of this template (`None`
    /// if the key does not match it or the field is not in it).
    pub fn sk_value(&self, sk: &str, field: &str) -> Option<Value> {
        let captured = template::matches(self.sk, sk)?;
        let (text, format) = template::segments(self.sk)
            .filter_map(|s| match s {
                template::Segment::Composite { field, format } => Some((field, format)),
                template::Segment::Literal(_) => None,
            })
            .zip(captured)
            .find_map(|((f, format), text)| (f == field).then_some((text, format)))?;
        template::unformat(format, text)
    }

    /// A query of one partition (every partition key composite in `parts`)
    /// whose sort keys begin with the sort key template's leading
    /// composites given in `parts`.
    pub fn query(&self, parts: Parts) -> Result<KeyQuery, TemplateError> {
        let value_of = in_parts(parts);
        let pk = template::render(self.pk, &value_of)?;
        let (prefix, _) = template::prefix(self.sk, &value_of)?;
        Ok(KeyQuery { index: self.index, pk, sk: SortKey::BeginsWith(prefix), newest_first: false })
    }

    /// A query of one partition whose sort keys lie between `low` and
    /// `high` (both inclusive), each the sort key's leading composites: a
    /// bound that is not a whole key takes every key it begins.
    pub fn between(&self, partition: Parts, low: Parts, high: Parts) -> Result<KeyQuery, TemplateError> {
        let pk = template::render(self.pk, &in_parts(partition))?;
        let (low, _) = template::prefix(self.sk, &in_parts(low))?;
        let (mut high, whole) = template::prefix(self.sk, &in_parts(high))?;
        if !whole {
            // `~` sorts after every character a key part may hold.
            high.push('~');
        }
        Ok(KeyQuery { index: self.index, pk, sk: SortKey::Between(low, high), newest_first: false })
    }
}

/// One index an entity joins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexDecl {
    /// Named after the access pattern it serves (`by_seller`, `browse`).
    pub name: &'static str,
    /// Its templates.
    pub key: KeyDecl,
    /// Sparse: the item is in the index only while this field has this
    /// value (it is also out of it while a composite is missing).
    pub only_when: Option<(&'static str, &'static str)>,
    /// Who keeps its keys.
    pub kept: Keeping,
}

impl IndexDecl {
    /// Every field that decides the key: the composites and the sparse
    /// condition's field.
    pub fn fields(&self) -> Vec<&'static str> {
        let mut fields = self.key.fields();
        fields.extend(self.only_when.map(|(f, _)| f));
        fields
    }

    /// The item's key on this index, `None` if it is not in it (the sparse
    /// condition fails or a composite has no value).
    pub fn key_of(&self, value_of: &dyn Fn(&str) -> Option<Value>) -> Result<Option<Key>, TemplateError> {
        if let Some((field, value)) = self.only_when {
            if value_of(field).as_ref().map(Value::text) != Some(value) {
                return Ok(None);
            }
        }
        match self.key.render(value_of) {
            Ok(key) => Ok(Some(key)),
            Err(TemplateError::Missing(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// One entity: its primary key and the indexes it joins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntityDecl {
    /// Which entity.
    pub entity: EntityType,
    /// Its primary key.
    pub key: KeyDecl,
    /// The indexes it joins.
    pub indexes: &'static [IndexDecl],
    /// Fields its older items may lack (see [`Defaults`]).
    pub defaults: Defaults,
    /// What the docs say of it.
    pub note: &'static str,
}

/// What a change does to one index's keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyMove {
    /// Sets the index's keys.
    Set(Index, Key),
    /// Sets its sort key alone (see [`Keeping::moves_sort_key`]).
    SetSortKey(Index, String),
    /// Removes them.
    Remove(Index),
}

impl EntityDecl {
    fn error(&self, index: &'static str) -> impl Fn(TemplateError) -> SchemaError + '_ {
        move |source| SchemaError::Template { entity: self.entity, index, source }
    }

    /// The primary key from its composites.
    pub fn key(&self, parts: Parts) -> Result<Key, SchemaError> {
        self.key.render(&in_parts(parts)).map_err(self.error("table"))
    }

    /// A query of the table by the primary key's leading composites.
    pub fn query(&self, parts: Parts) -> Result<KeyQuery, SchemaError> {
        self.key.query(parts).map_err(self.error("table"))
    }

    /// The item's keys on the table and on every index it is in now.
    pub fn item_keys(&self, attrs: &Attrs) -> Result<ItemKeys, SchemaError> {
        self.keys_where(attrs, |_| true)
    }

    /// The keys a write of a new item puts with it: the table's and those
    /// of the indexes whose keys the writes add (the stream processor adds
    /// the others).
    pub fn written_keys(&self, attrs: &Attrs) -> Result<ItemKeys, SchemaError> {
        self.keys_where(attrs, |i| i.kept.adds.by_write())
    }

    fn keys_where(&self, attrs: &Attrs, wanted: impl Fn(&IndexDecl) -> bool) -> Result<ItemKeys, SchemaError> {
        let value_of = in_attrs(attrs, self.defaults);
        let mut keys = std::collections::BTreeMap::new();
        keys.insert(Index::Table, self.key.render(&value_of).map_err(self.error("table"))?);
        for index in self.indexes.iter().filter(|i| wanted(i)) {
            if let Some(key) = index.key_of(&value_of).map_err(self.error(index.name))? {
                keys.insert(index.key.index, key);
            }
        }
        Ok(ItemKeys { entity: self.entity, keys })
    }

    /// The key moves of setting the fields in `set` on an item of which
    /// `known` holds (at least) every other field the moved indexes read:
    /// each index whose fields meet `set` and whose keeper is the write gets
    /// its keys recomputed (`Set`) or, when the item leaves it, removed, or
    /// its sort key alone (`SetSortKey`, see [`Keeping::moves_sort_key`]);
    /// one kept by the stream processor is left to it. A change that does
    /// not know a field a move needs is refused (`Incomplete`), and so is
    /// one that sets a primary key field.
    pub fn key_moves(&self, known: &Attrs, set: &Attrs) -> Result<Vec<KeyMove>, SchemaError> {
        if let Some(field) = self.key.fields().into_iter().find(|f| set.contains_key(*f)) {
            return Err(SchemaError::PrimaryKeyChange { entity: self.entity, field: field.to_owned() });
        }
        let value_of = |f: &str| set.get(f).or_else(|| known.get(f)).cloned();
        let mut moves = Vec::new();
        for index in self.indexes {
            let fields = index.fields();
            let Some(touched) = fields.iter().find(|f| set.contains_key(**f)) else { continue };
            let incomplete = |missing| SchemaError::Incomplete {
                entity: self.entity,
                index: index.name,
                set: (*touched).to_owned(),
                missing,
            };
            let sort_key_alone = index.kept.moves_sort_key.by_write()
                && index.key.sk_fields().any(|f| set.contains_key(f))
                && !index.key.pk_fields().any(|f| set.contains_key(f));
            if let Some((field, value)) = index.only_when {
                match value_of(field) {
                    Some(now) if now.text() != value => {
                        // The item leaves (or stays out of) the index.
                        if index.kept.removes.by_write() {
                            moves.push(KeyMove::Remove(index.key.index));
                        }
                        continue;
                    }
                    Some(_) => {}
                    // In the index or not, its sort key may move.
                    None if sort_key_alone => {}
                    None => return Err(incomplete(field)),
                }
            }
            if !(index.kept.adds.by_write() && index.kept.moves.by_write()) {
                // In the index now, by a change: the stream processor moves
                // its keys (and adds them unless the writes both add and
                // move them; a creation's written keys are `written_keys`),
                // but for a sort key the write moves alone.
                if sort_key_alone {
                    if let Some(missing) = index.key.sk_fields().find(|f| value_of(f).is_none()) {
                        return Err(incomplete(missing));
                    }
                    let sk = template::render(index.key.sk, &value_of).map_err(self.error(index.name))?;
                    moves.push(KeyMove::SetSortKey(index.key.index, sk));
                }
                continue;
            }
            if let Some(missing) = fields.iter().find(|f| value_of(f).is_none()) {
                return Err(incomplete(missing));
            }
            if let Some(key) = index.key_of(&value_of).map_err(self.error(index.name))? {
                moves.push(KeyMove::Set(index.key.index, key));
            }
        }
        Ok(moves)
    }

    /// `change` (to an item of this entity) with the key moves of the
    /// fields it sets, given what is `known` of the item.
    pub fn with_key_moves(&self, mut change: Change, known: &Attrs) -> Result<Change, SchemaError> {
        let set: Attrs = change.set.iter().map(|(a, v)| ((*a).to_owned(), v.clone())).collect();
        for key_move in self.key_moves(known, &set)? {
            change = match key_move {
                KeyMove::Set(index, key) => change.set(index.pk(), Value::S(key.pk)).set(index.sk(), Value::S(key.sk)),
                KeyMove::SetSortKey(index, sk) => change.set(index.sk(), Value::S(sk)),
                KeyMove::Remove(index) => change.remove(index.pk()).remove(index.sk()),
            };
        }
        Ok(change)
    }

    /// The indexes the stream processor keeps (adds, moves or removes).
    pub fn stream_kept(&self) -> impl Iterator<Item = &IndexDecl> {
        self.indexes
            .iter()
            .filter(|i| i.kept.adds.by_stream() || i.kept.moves.by_stream() || i.kept.removes.by_stream())
    }

    /// The write that brings the keys of the indexes `keeper` keeps in line
    /// with the item's fields (`Keeper::Both`: every index, as a
    /// maintenance job does after a key design change or lost records),
    /// from an image of it (its attributes, key attributes included); `None`
    /// if they are right. Conditioned on every
    /// field that decided, as the image has it, so a stale image (a
    /// replayed or reordered stream record) changes nothing; and, when it
    /// sets keys, on some of them differing, so a replay after the repair
    /// sends nothing either.
    pub fn repair(&self, image: &Attrs, keeper: Keeper) -> Result<Option<Change>, SchemaError> {
        let value_of = in_attrs(image, self.defaults);
        let table = self.key.render(&value_of).map_err(self.error("table"))?;
        let mut change = Change::untimed(table);
        let mut differs = Vec::new();
        let mut decided: Vec<&'static str> = Vec::new();
        for index in self.indexes {
            let (i, kept) = (index.key.index, index.kept);
            let mine = |k: Keeper| match keeper {
                Keeper::Both => true,
                Keeper::Stream => k.by_stream(),
                Keeper::Write => k.by_write(),
            };
            let expected = index.key_of(&value_of).map_err(self.error(index.name))?;
            let stored = match (image.get(i.pk()), image.get(i.sk())) {
                (Some(Value::S(pk)), Some(Value::S(sk))) => Some(Key::new(pk.clone(), sk.clone())),
                _ => None,
            };
            match (&expected, &stored) {
                (Some(e), s)
                    if Some(e) != s.as_ref() && (if s.is_none() { mine(kept.adds) } else { mine(kept.moves) }) =>
                {
                    change = change.set(i.pk(), Value::S(e.pk.clone())).set(i.sk(), Value::S(e.sk.clone()));
                    differs.push((i.pk(), Value::S(e.pk.clone())));
                    differs.push((i.sk(), Value::S(e.sk.clone())));
                }
                (None, Some(_)) if mine(kept.removes) => change = change.remove(i.pk()).remove(i.sk()),
                _ => continue,
            }
            decided.extend(index.fields());
        }
        if change.set.is_empty() && change.remove.is_empty() {
            return Ok(None);
        }
        decided.sort_unstable();
        decided.dedup();
        for field in decided {
            change = change.only_if(match image.get(field) {
                Some(v) => Cond::Eq(field, v.clone()),
                None => Cond::NotExists(field),
            });
        }
        if !differs.is_empty() {
            change = change.only_if(Cond::AnyDiffers(differs));
        } else {
            change = change.only_if(Cond::ItemExists);
        }
        Ok(Some(change))
    }
}

//! An item with its details (`keyschema::entities::details`: a listing's or
//! a product's description, kept beside it in its partition so that no
//! index copy holds it): both read in one `Query` of the partition.

use keyschema::table::EntityType;
use keyschema::{DetailsQuery, Entity};

use crate::item::{entity_type, from_item, Item};
use crate::{Store, StoreError};

impl Store {
    /// The `E` of `query`'s partition and its details `D`, if written, in
    /// one `Query` (`keyschema::access::listing_with_details`, say);
    /// strongly consistent if asked. `None`: no `E` there. Items of other
    /// types the query selects are left.
    pub async fn get_with_details<E: Entity, D: Entity>(
        &self,
        query: &DetailsQuery<E, D>,
        consistent: bool,
    ) -> Result<Option<(E, Option<D>)>, StoreError> {
        let found = self.get_with_details_and::<E, D, D>(query, consistent).await?;
        Ok(found.map(|(item, details, _)| (item, details)))
    }

    /// [`Store::get_with_details`], and the items of `P` the query also
    /// selects (a product's other shares of stock), in key order.
    pub async fn get_with_details_and<E: Entity, D: Entity, P: Entity>(
        &self,
        query: &DetailsQuery<E, D>,
        consistent: bool,
    ) -> Result<Option<(E, Option<D>, Vec<P>)>, StoreError> {
        let (mut found, mut details, mut parts) = (None, None, Vec::new());
        for (t, item) in self.partition(query, consistent).await? {
            match t {
                t if t == E::DECL.entity => found = Some(from_item::<E>(item)?),
                t if t == D::DECL.entity => details = Some(from_item::<D>(item)?),
                t if t == P::DECL.entity => parts.push(from_item::<P>(item)?),
                _ => {}
            }
        }
        Ok(found.map(|f| (f, details, parts)))
    }

    /// The `E` of `query`'s partition and the items of `P` beside it that
    /// the query selects, in key order (an order and the items it does not
    /// hold: `keyschema::access::order_with_items`), in one `Query`.
    /// `None`: no `E` there.
    pub async fn get_with_beside<E: Entity, P: Entity>(
        &self,
        query: &DetailsQuery<E, P>,
        consistent: bool,
    ) -> Result<Option<(E, Vec<P>)>, StoreError> {
        let (mut found, mut beside) = (None, Vec::new());
        for (t, item) in self.partition(query, consistent).await? {
            match t {
                t if t == E::DECL.entity => found = Some(from_item::<E>(item)?),
                t if t == P::DECL.entity => beside.push(from_item::<P>(item)?),
                _ => {}
            }
        }
        Ok(found.map(|f| (f, beside)))
    }

    /// The items one `Query` of `query` selects (its first page: a
    /// partition's few items), each with its entity type (those of none
    /// known are left).
    async fn partition<E, D>(
        &self,
        query: &DetailsQuery<E, D>,
        consistent: bool,
    ) -> Result<Vec<(EntityType, Item)>, StoreError> {
        let page = self.query_request(query, None, None, consistent).send().await?;
        let typed = |item: Item| Some((entity_type(&item)?.parse::<EntityType>().ok()?, item));
        Ok(page.items.unwrap_or_default().into_iter().filter_map(typed).collect())
    }
}

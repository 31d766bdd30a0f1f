//! The replicator's check of every write against the homes the design
//! declares (`keyschema::homes`): an item written by a region's own clients
//! in a region that is not its home is a write that last writer wins may
//! later undo (docs/regions.md).

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use keyschema::homes::{HomeRule, HOME};
use keyschema::table::{EntityType, ENTITY_TYPE};

/// What the check knows: the primary region, and the homes of the listings,
/// orders and users it has seen (what other items' homes follow).
#[derive(Debug, Default)]
pub(crate) struct Homes {
    primary: String,
    listings: HashMap<String, String>,
    orders: HashMap<String, String>,
    users: HashMap<String, String>,
}

fn s<'a>(image: &'a HashMap<String, AttributeValue>, name: &str) -> Option<&'a str> {
    image.get(name).and_then(|v| v.as_s().ok()).map(String::as_str)
}

impl Homes {
    pub(crate) fn new(primary: &str) -> Homes {
        Homes { primary: primary.to_owned(), ..Homes::default() }
    }

    /// Whether any region may write the item of `image` (the same item
    /// whoever writes it: a write in both regions is no conflict).
    pub(crate) fn anywhere(image: &HashMap<String, AttributeValue>) -> bool {
        s(image, ENTITY_TYPE).and_then(|t| t.parse::<EntityType>().ok()).is_some_and(|e| e.home() == HomeRule::Anywhere)
    }

    /// The home the design gives the item of `image` (learning a listing's
    /// or an order's on the way); `None` when it cannot tell (no entity
    /// type, or an item of a listing or an order it has not seen).
    pub(crate) fn expected(&mut self, image: &HashMap<String, AttributeValue>) -> Option<String> {
        let entity: EntityType = s(image, ENTITY_TYPE)?.parse().ok()?;
        let named = || s(image, HOME).unwrap_or(&self.primary).to_owned();
        let of_order = |homes: &Homes| homes.orders.get(s(image, "orderId")?).cloned();
        let of_listing = |homes: &Homes| homes.listings.get(s(image, "listingId")?).cloned();
        if entity == EntityType::User {
            if let Some(id) = s(image, "userId") {
                self.users.insert(id.to_owned(), named());
            }
        }
        match entity.home() {
            HomeRule::Named => {
                let home = named();
                match entity {
                    EntityType::Listing => {
                        s(image, "listingId").map(|id| self.listings.insert(id.to_owned(), home.clone()))
                    }
                    EntityType::Order => s(image, "orderId").map(|id| self.orders.insert(id.to_owned(), home.clone())),
                    _ => None,
                };
                Some(home)
            }
            HomeRule::Primary => Some(self.primary.clone()),
            HomeRule::OfOrder => of_order(self),
            HomeRule::OfListing => of_listing(self),
            HomeRule::OfCaller => self.users.get(s(image, "callerId")?).cloned(),
            HomeRule::Anywhere => None,
        }
    }
}

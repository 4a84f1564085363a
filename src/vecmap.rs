//! [`VecMap`]: the one map the crate uses, a sorted vector.
//!
//! Every table here is small and bounded (sessions by name, calls in
//! flight, turns by session), where a sorted vector is as fast as a hash or
//! B-tree map and costs far less code: each `HashMap` or `BTreeMap`
//! instance brought 1.5-9 KB of insert, rehash and rebalancing code to the
//! binary (issue 19 bounds its size).

use std::borrow::Borrow;

/// A map kept as a vector of pairs in key order; lookups are binary
/// searches, inserts and removes move the pairs after the place.
#[derive(Clone, Debug)]
pub(crate) struct VecMap<K, V>(Vec<(K, V)>);

impl<K, V> Default for VecMap<K, V> {
    fn default() -> Self {
        VecMap(Vec::new())
    }
}

impl<K: Ord, V> VecMap<K, V> {
    fn find<Q: Ord + ?Sized>(&self, key: &Q) -> Result<usize, usize>
    where
        K: Borrow<Q>,
    {
        self.0.binary_search_by(|(k, _)| k.borrow().cmp(key))
    }

    pub(crate) fn get<Q: Ord + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    pub(crate) fn get_mut<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| &mut self.0[i].1)
    }

    pub(crate) fn contains_key<Q: Ord + ?Sized>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
    {
        self.find(key).is_ok()
    }

    /// Put `value` under `key`, giving back the value it replaced.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                self.0.insert(i, (key, value));
                None
            }
        }
    }

    /// The value under `key`, made with `make` if there is none.
    pub(crate) fn get_or_insert_with(&mut self, key: K, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(&key) {
            Ok(i) => i,
            Err(i) => {
                self.0.insert(i, (key, make()));
                i
            }
        };
        &mut self.0[i].1
    }

    pub(crate) fn remove<Q: Ord + ?Sized>(&mut self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
    {
        self.find(key).ok().map(|i| self.0.remove(i).1)
    }
}

impl<K, V> VecMap<K, V> {
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The pairs, in key order.
    pub(crate) fn pairs(&self) -> &[(K, V)] {
        &self.0
    }

    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        self.0.iter().map(|(_, v)| v)
    }

    /// Empty the map, giving back its pairs in key order.
    pub(crate) fn take(&mut self) -> Vec<(K, V)> {
        std::mem::take(&mut self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::VecMap;

    #[test]
    fn a_vecmap_behaves_as_a_map_in_key_order() {
        let mut m = VecMap::default();
        assert_eq!(m.insert("b".to_string(), 2), None);
        assert_eq!(m.insert("a".to_string(), 1), None);
        assert_eq!(m.insert("c".to_string(), 3), None);
        assert_eq!(m.insert("b".to_string(), 20), Some(2));
        assert_eq!(m.get("b"), Some(&20));
        assert!(m.contains_key("a") && !m.contains_key("d"));
        *m.get_mut("a").unwrap() += 10;
        *m.get_or_insert_with("d".to_string(), || 0) += 4;
        *m.get_or_insert_with("d".to_string(), || 100) += 1;
        let keys: Vec<_> = m.pairs().iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(keys, [("a", 11), ("b", 20), ("c", 3), ("d", 5)]);
        assert_eq!(m.remove("c"), Some(3));
        assert_eq!(m.remove("c"), None);
        assert_eq!(m.len(), 3);
        assert_eq!(m.values().sum::<i32>(), 36);
        assert_eq!(m.take().len(), 3);
        assert!(m.is_empty());
    }
}

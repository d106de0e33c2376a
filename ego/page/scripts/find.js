// The first element matching selector (open shadow roots pierced), or null.
(selector) => __DOM__.query(selector)

// The element an action chose: match index of a selector's matches, or the ref's node itself.
function (index) { return Array.isArray(this) ? this[index] : this; }

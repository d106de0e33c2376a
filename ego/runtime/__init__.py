"""What turns a tool into a call in the page: the JavaScript built for it (:mod:`.js`), the
localStorage cache it runs through (:mod:`.cache`) and the error contract read from its
answer (:mod:`.contract`)."""

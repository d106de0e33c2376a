// Ego Demo Shop: the only script the pages load (the CSP is script-src 'self').
// Progressive enhancement: every form also works without this file.
(function () {
  "use strict";

  async function api(method, path, body) {
    const init = { method, headers: { Accept: "application/json" } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    let data = null;
    try {
      data = await response.json();
    } catch (e) {
      data = { error: "bad response (" + response.status + ")" };
    }
    return { ok: response.ok, status: response.status, data };
  }

  function setCartCount(count) {
    for (const el of document.querySelectorAll('[data-testid="cart-count"]')) {
      el.textContent = String(count);
    }
  }

  async function refreshCart() {
    const { ok, data } = await api("GET", "/api/cart");
    if (ok) setCartCount(data.count);
  }

  function enhanceAddToCart() {
    for (const button of document.querySelectorAll('[data-testid="add-to-cart"]')) {
      button.addEventListener("click", async () => {
        const productId = Number(button.dataset.productId);
        button.disabled = true;
        const { ok, data } = await api("POST", "/api/cart", { product_id: productId, quantity: 1 });
        button.disabled = false;
        button.dataset.state = ok ? "added" : "error";
        button.textContent = ok ? "Added" : data.error || "Could not add";
        if (ok) setCartCount(data.count);
      });
    }
  }

  function enhanceContactForm() {
    const form = document.querySelector('form[data-testid="contact-form"]');
    if (!form) return;
    const status = document.querySelector('[data-testid="contact-status"]');
    form.dataset.enhanced = "true";
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const fields = Object.fromEntries(new FormData(form).entries());
      status.hidden = false;
      status.className = "notice";
      status.dataset.state = "sending";
      status.textContent = "Sending…";
      const { ok, data } = await api("POST", "/api/contact", fields);
      if (ok) {
        status.dataset.state = "sent";
        status.dataset.messageId = String(data.id);
        status.textContent = "Thanks! Message #" + data.id + " was received.";
        form.reset();
      } else {
        status.className = "error";
        status.dataset.state = "error";
        status.textContent = data.error || "Could not send the message.";
      }
    });
  }

  function enhanceReviewForm() {
    const form = document.querySelector('form[data-testid="review-form"]');
    if (!form) return;
    form.dataset.enhanced = "true";
    const status = document.querySelector('[data-testid="review-status"]');
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const fields = new FormData(form);
      const productId = form.dataset.productId;
      const { ok, data } = await api("POST", "/api/products/" + productId + "/reviews", {
        rating: Number(fields.get("rating")),
        text: String(fields.get("text") || ""),
      });
      status.hidden = false;
      if (!ok) {
        status.className = "error";
        status.textContent = data.error || "Could not post the review.";
        return;
      }
      status.className = "notice";
      status.textContent = "Review published.";
      const item = document.createElement("li");
      item.className = "review";
      item.dataset.testid = "review";
      const author = document.createElement("strong");
      author.className = "review-author";
      author.textContent = data.review.author;
      const rating = document.createElement("span");
      rating.className = "review-rating";
      rating.dataset.rating = String(data.review.rating);
      rating.textContent = " " + "★".repeat(data.review.rating);
      const text = document.createElement("p");
      text.className = "review-text";
      text.textContent = data.review.text;
      item.append(author, rating, text);
      document.querySelector('[data-testid="review-list"]').append(item);
      form.reset();
    });
  }

  async function showRelated() {
    // The search page's top rated matches, from the search API the page names (data-api).
    const aside = document.querySelector('[data-testid="search-related"]');
    if (!aside || !aside.dataset.q) return;
    const params = new URLSearchParams({ q: aside.dataset.q, limit: "3", sort: "-rating" });
    const { ok, data } = await api("GET", aside.dataset.api + "?" + params);
    if (!ok) return;
    const list = aside.querySelector('[data-testid="related-list"]');
    for (const product of data.products) {
      const item = document.createElement("li");
      item.dataset.testid = "related-item";
      item.textContent = product.title || product.name;
      list.append(item);
    }
    aside.hidden = data.products.length === 0;
  }

  async function showLiveStock() {
    // The product page asks the API for the stock as it is now.
    const line = document.querySelector('[data-testid="live-stock"]');
    if (!line) return;
    const { ok, data } = await api("GET", "/api/products/" + line.dataset.productId);
    if (!ok) return;
    line.dataset.stock = String(data.stock);
    line.textContent = data.stock + " in stock right now";
    line.hidden = false;
  }

  function start() {
    showRelated().catch(() => {});
    showLiveStock().catch(() => {});
    enhanceAddToCart();
    enhanceContactForm();
    enhanceReviewForm();
    refreshCart().catch(() => {});
    document.documentElement.dataset.app = "ready";
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();

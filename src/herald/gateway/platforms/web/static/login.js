"use strict";
(function () {
  const base = document.querySelector('meta[name="base"]').content;
  const form = document.getElementById("login-form");
  const error = document.getElementById("login-error");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.hidden = true;
    const token = document.getElementById("token").value.trim();
    try {
      const response = await fetch(base + "/login", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ token }),
        credentials: "same-origin",
      });
      if (response.ok) {
        window.location.assign(base + "/");
        return;
      }
      const body = await response.json().catch(() => ({}));
      error.textContent = body.error || ("login failed (" + response.status + ")");
    } catch (err) {
      error.textContent = "the gateway did not answer: " + err.message;
    }
    error.hidden = false;
  });
})();

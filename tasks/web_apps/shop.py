"""Kettle & Co., a housewares shop: catalogue, search, product pages, a cart with quantities and a discount code,
checkout with an address and a delivery option, and an order history where an order still processing can be
cancelled. Three past orders are seeded; new orders are appended, so `orders.-1` is the latest."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from .common import (
    WebApp,
    action_button,
    button,
    error_summary,
    esc,
    form,
    form_data,
    hidden,
    link,
    money,
    parse_int,
    radios,
    select,
    text_input,
)


@dataclass(frozen=True)
class Product:
    sku: str
    name: str
    category: str
    price: int
    """In cents."""
    description: str


CATEGORIES = {"mugs": "Mugs & cups", "tea-coffee": "Tea & coffee", "kitchen": "Kitchen tools",
              "tableware": "Tableware"}
PRODUCTS = {p.sku: p for p in (
    Product("blue-mug", "Blue mug", "mugs", 1200, "Stoneware mug, 350 ml, glazed in deep blue."),
    Product("red-mug", "Red mug", "mugs", 1200, "Stoneware mug, 350 ml, glazed in brick red."),
    Product("speckled-mug", "Speckled mug", "mugs", 1400, "Hand-thrown mug, 300 ml, oatmeal glaze with speckles."),
    Product("espresso-cups", "Espresso cup set", "mugs", 2400, "Four porcelain espresso cups with saucers."),
    Product("teapot", "Teapot", "tea-coffee", 3600, "Cast iron teapot, 0.8 litres, with a steel infuser."),
    Product("french-press", "French press", "tea-coffee", 2900, "Glass and steel French press for four cups."),
    Product("hand-grinder", "Hand coffee grinder", "tea-coffee", 3400, "Manual grinder with ceramic burrs."),
    Product("electric-grinder", "Electric coffee grinder", "tea-coffee", 5900, "Blade grinder, 200 W."),
    Product("burr-grinder", "Burr coffee grinder", "tea-coffee", 8900, "Electric grinder with 40 grind settings."),
    Product("chefs-knife", "Chef's knife", "kitchen", 4500, "20 cm blade of carbon steel, oak handle."),
    Product("bread-knife", "Bread knife", "kitchen", 2700, "Serrated 23 cm blade."),
    Product("cutting-board", "Cutting board", "kitchen", 1900, "End-grain beech, 40 by 25 cm."),
    Product("wooden-spoon", "Wooden spoon", "kitchen", 450, "Olive wood, 30 cm."),
    Product("tea-towel", "Tea towel", "kitchen", 650, "Linen, striped."),
    Product("salad-bowl", "Salad bowl", "tableware", 2200, "Acacia wood bowl, 28 cm across."),
    Product("storage-jar", "Glass storage jar", "tableware", 800, "One litre, with a cork lid."),
)}
DISCOUNTS = {"WELCOME10": (10, 3000)}
"""Code → (percent off, the subtotal in cents an order must exceed)."""
DELIVERY = {"standard": ("Standard delivery (3–5 days, €4.90)", 490),
            "express": ("Express delivery (1–2 days, €9.90)", 990),
            "pickup": ("Store pickup (free)", 0)}
COUNTRIES = (("", "Choose a country"), ("BE", "Belgium"), ("FR", "France"), ("DE", "Germany"),
             ("NL", "Netherlands"), ("ES", "Spain"))
CANCEL_REASONS = (("", "Choose a reason"), ("mistake", "Ordered by mistake"), ("price", "Found a better price"),
                  ("slow", "Delivery takes too long"), ("other", "Other"))
TODAY = "2025-06-02"
ADDRESS_FIELDS = (("name", "Full name"), ("street", "Street address"), ("postcode", "Postcode"), ("city", "City"))


def _past_order(number: str, date: str, status: str, items: dict[str, int], name: str, city: str) -> dict[str, Any]:
    subtotal = sum(PRODUCTS[sku].price * qty for sku, qty in items.items())
    return {"number": number, "date": date, "status": status, "items": items, "name": name, "street": "4 Quai Est",
            "postcode": "69002", "city": city, "country": "FR", "delivery": "standard", "discount_code": None,
            "subtotal": subtotal, "discount": 0, "shipping": 490, "total": subtotal + 490, "cancel_reason": None}


class Shop(WebApp):
    title = "Kettle & Co."
    blurb = "an online housewares shop"
    setup_keys = frozenset({"cart"})

    def __init__(self, setup: Mapping[str, Any] | None = None) -> None:
        super().__init__(setup)
        cart = dict((setup or {}).get("cart", {}))
        for sku, qty in cart.items():
            if sku not in PRODUCTS or isinstance(qty, bool) or not isinstance(qty, int) or not 1 <= qty <= 99:
                raise ValueError(f"setup cart: {sku!r}: {qty!r} must be a known product and a quantity 1-99")
        self.cart: dict[str, int] = cart
        self.discount_code: str | None = None
        self.orders = [
            _past_order("A1001", "2025-05-12", "delivered", {"blue-mug": 2}, "Sam Rivera", "Lyon"),
            _past_order("A1002", "2025-05-30", "processing", {"salad-bowl": 1, "wooden-spoon": 2}, "Sam Rivera",
                        "Lyon"),
            _past_order("A1003", "2025-06-01", "processing", {"french-press": 1}, "Sam Rivera", "Lyon"),
        ]

    def routes(self) -> list[web.RouteDef]:
        return [web.get("/", self.home), web.get("/category/{slug}", self.category), web.get("/search", self.search),
                web.get("/product/{sku}", self.product), web.post("/cart/add", self.add),
                web.get("/cart", self.show_cart), web.post("/cart/update", self.update_cart),
                web.post("/cart/remove", self.remove), web.post("/cart/discount", self.apply_discount),
                web.get("/checkout", self.checkout_form), web.post("/checkout", self.checkout),
                web.get("/orders", self.order_list), web.get("/orders/{number}", self.order),
                web.post("/orders/{number}/cancel", self.cancel)]

    def nav(self) -> list[tuple[str, str]]:
        return [("/", "Home"), ("/cart", "Cart"), ("/orders", "Your orders")]

    def header(self) -> str:
        search = form("/search", text_input("Search products", "q") + button("Search"), method="get")
        return f'<div role="search">{search}</div>'

    def state(self) -> dict[str, Any]:
        return {"cart": dict(self.cart), "discount_code": self.discount_code, "orders": self.orders}

    # --- browsing ------------------------------------------------------------------------------------------

    @staticmethod
    def _listing(products: list[Product]) -> str:
        rows = "".join(f"<li>{link(f'/product/{p.sku}', p.name)} — {money(p.price)} "
                       + action_button("/cart/add", "Add to cart", label=f"Add {p.name} to cart",
                                       fields={"sku": p.sku, "quantity": 1}) + "</li>" for p in products)
        return f"<ul>{rows}</ul>"

    async def home(self, request: web.Request) -> web.Response:
        code, (percent, minimum) = next(iter(DISCOUNTS.items()))
        categories = "".join(f"<li>{link(f'/category/{slug}', name)}</li>" for slug, name in CATEGORIES.items())
        body = (f"<p><strong>Spring offer:</strong> use the code {esc(code)} for {percent}% off any order over "
                f"{money(minimum)}.</p><h2>Departments</h2><ul>{categories}</ul><h2>Bestsellers</h2>"
                + self._listing([PRODUCTS[s] for s in ("speckled-mug", "french-press", "cutting-board")]))
        return self.page(request, "Welcome to Kettle & Co.", body)

    async def category(self, request: web.Request) -> web.Response:
        slug = request.match_info["slug"]
        if slug not in CATEGORIES:
            raise web.HTTPNotFound()
        products = [p for p in PRODUCTS.values() if p.category == slug]
        return self.page(request, CATEGORIES[slug], self._listing(sorted(products, key=lambda p: p.name)))

    async def search(self, request: web.Request) -> web.Response:
        query = request.query.get("q", "").strip()
        words = query.casefold().split()
        found = sorted((p for p in PRODUCTS.values()
                        if words and all(w in f"{p.name} {p.description}".casefold() for w in words)),
                       key=lambda p: p.name)
        if not query:
            body = "<p>Type what you are looking for in the search box.</p>"
        elif not found:
            body = f"<p>No products match “{esc(query)}”.</p>"
        else:
            body = f"<p>{len(found)} products match “{esc(query)}”:</p>{self._listing(found)}"
        return self.page(request, "Search results", body)

    def _product_page(self, request: web.Request, p: Product, quantity: str = "1",
                      error: str | None = None) -> web.Response:
        order = form("/cart/add", hidden({"sku": p.sku})
                     + text_input("Quantity", "quantity", quantity, kind="number", error=error)
                     + button("Add to cart", label=f"Add {p.name} to cart"))
        body = (f"{error_summary({'quantity': error} if error else {})}<p>{esc(p.description)}</p>"
                f"<p>Price: {money(p.price)}</p>{order}"
                f"<p>More in {link(f'/category/{p.category}', CATEGORIES[p.category])}</p>")
        return self.page(request, p.name, body, status=422 if error else 200)

    async def product(self, request: web.Request) -> web.Response:
        p = PRODUCTS.get(request.match_info["sku"])
        if p is None:
            raise web.HTTPNotFound()
        return self._product_page(request, p)

    # --- the cart ------------------------------------------------------------------------------------------

    async def add(self, request: web.Request) -> web.Response:
        data = await form_data(request)
        p = PRODUCTS.get(data.get("sku", ""))
        if p is None:
            raise web.HTTPNotFound()
        qty = parse_int(data.get("quantity", ""), 1, 99)
        if qty is None or self.cart.get(p.sku, 0) + qty > 99:
            error = "Choose a quantity from 1 to 99 (the cart holds at most 99 of one product)."
            return self._product_page(request, p, data.get("quantity", ""), error)
        self.cart[p.sku] = self.cart.get(p.sku, 0) + qty
        self.redirect("/cart", f"Added {qty} × {p.name} to your cart.")

    def _totals(self, code: str | None, delivery: str | None) -> dict[str, int]:
        subtotal = sum(PRODUCTS[sku].price * qty for sku, qty in self.cart.items())
        percent, minimum = DISCOUNTS.get(code or "", (0, 0))
        discount = subtotal * percent // 100 if subtotal > minimum else 0
        shipping = DELIVERY[delivery][1] if delivery else 0
        return {"subtotal": subtotal, "discount": discount, "shipping": shipping,
                "total": subtotal - discount + shipping}

    def _cart_page(self, request: web.Request, errors: dict[str, str] | None = None, status: int = 200,
                   code: str = "") -> web.Response:
        errors = errors or {}
        if not self.cart:
            return self.page(request, "Your cart", f"<p>Your cart is empty.</p><p>{link('/', 'Continue shopping')}</p>")
        rows = "".join(
            f"<tr><td>{link(f'/product/{sku}', PRODUCTS[sku].name)}</td><td>{money(PRODUCTS[sku].price)}</td><td>"
            + text_input(f"Quantity of {PRODUCTS[sku].name}", f"qty-{sku}", qty, kind="number",
                         error=errors.get(f"qty-{sku}"))
            + f"</td><td>{money(PRODUCTS[sku].price * qty)}</td><td><button type=\"submit\" form=\"remove\" "
            f'name="sku" value="{esc(sku)}" aria-label="Remove {esc(PRODUCTS[sku].name)}">Remove</button></td></tr>'
            for sku, qty in self.cart.items())
        table = ("<table><thead><tr><th>Product</th><th>Price</th><th>Quantity</th><th>Line total</th><th></th></tr>"
                 f"</thead><tbody>{rows}</tbody></table>")
        totals = self._totals(self.discount_code, None)
        applied = ""
        if self.discount_code:
            percent, minimum = DISCOUNTS[self.discount_code]
            applied = (f"<p>Discount code {esc(self.discount_code)}: {percent}% off orders over {money(minimum)}"
                       f" (−{money(totals['discount'])} on this cart).</p>")
        body = (error_summary(errors) + form("/cart/update", table + button("Update cart"))
                + '<form id="remove" method="post" action="/cart/remove" novalidate></form>'
                + f"<p>Subtotal: {money(totals['subtotal'])}</p>{applied}"
                + form("/cart/discount", text_input("Discount code", "code", code, error=errors.get("code"))
                       + button("Apply discount code"))
                + f"<p>{link('/checkout', 'Proceed to checkout')}</p>")
        return self.page(request, "Your cart", body, status=status)

    async def show_cart(self, request: web.Request) -> web.Response:
        return self._cart_page(request)

    async def update_cart(self, request: web.Request) -> web.Response:
        data = await form_data(request)
        quantities, errors = {}, {}
        for sku in self.cart:
            qty = parse_int(data.get(f"qty-{sku}", ""), 0, 99)
            if qty is None:
                errors[f"qty-{sku}"] = f"The quantity of {PRODUCTS[sku].name} must be a whole number from 0 to 99."
            quantities[sku] = qty
        if errors:
            return self._cart_page(request, errors, 422)
        self.cart = {sku: qty for sku, qty in quantities.items() if qty}
        self.redirect("/cart", "Your cart has been updated.")

    async def remove(self, request: web.Request) -> web.Response:
        sku = (await form_data(request)).get("sku", "")
        removed = self.cart.pop(sku, None) is not None
        self.redirect("/cart", f"Removed {PRODUCTS[sku].name} from your cart." if removed else
                      "That product was not in your cart.")

    async def apply_discount(self, request: web.Request) -> web.Response:
        code = (await form_data(request)).get("code", "").upper()
        if code not in DISCOUNTS:
            message = "Enter a discount code." if not code else f"The discount code {code} does not exist."
            return self._cart_page(request, {"code": message}, 422, code)
        self.discount_code = code
        self.redirect("/cart", f"The discount code {code} has been added to your cart.")

    # --- checkout and orders -------------------------------------------------------------------------------

    def _checkout_page(self, request: web.Request, values: dict[str, str], errors: dict[str, str],
                       status: int = 200) -> web.Response:
        lines = "".join(f"<li>{qty} × {esc(PRODUCTS[sku].name)} — {money(PRODUCTS[sku].price * qty)}</li>"
                        for sku, qty in self.cart.items())
        totals = self._totals(self.discount_code, None)
        discount = f"<p>Discount ({esc(self.discount_code)}): −{money(totals['discount'])}</p>" if totals[
            "discount"] else ""
        fields = "".join(text_input(label, key, values.get(key, ""), error=errors.get(key))
                         for key, label in ADDRESS_FIELDS)
        body = (f"{error_summary(errors)}<h2>Your items</h2><ul>{lines}</ul><p>Subtotal: {money(totals['subtotal'])}"
                f"</p>{discount}<h2>Delivery</h2>"
                + form("/checkout", fields
                       + select("Country", "country", COUNTRIES, values.get("country", ""), error=errors.get("country"))
                       + radios("Delivery method", "delivery", [(k, v[0]) for k, v in DELIVERY.items()],
                                values.get("delivery", "standard"), error=errors.get("delivery"))
                       + "<p>The street, postcode, city and country are not needed for store pickup.</p>"
                       + button("Place order")))
        return self.page(request, "Checkout", body, status=status)

    async def checkout_form(self, request: web.Request) -> web.Response:
        if not self.cart:
            self.redirect("/cart", "Your cart is empty: add something before checking out.")
        return self._checkout_page(request, {}, {})

    async def checkout(self, request: web.Request) -> web.Response:
        if not self.cart:
            self.redirect("/cart", "Your cart is empty: add something before checking out.")
        values = await form_data(request)
        delivery = values.get("delivery", "")
        errors = {}
        if delivery not in DELIVERY:
            errors["delivery"] = "Choose a delivery method."
        needed = ADDRESS_FIELDS[:1] if delivery == "pickup" else ADDRESS_FIELDS
        errors.update({key: f"Enter your {label.lower()}." for key, label in needed if not values.get(key)})
        if delivery != "pickup" and values.get("country", "") not in dict(COUNTRIES[1:]):
            errors["country"] = "Choose a country."
        postcode = values.get("postcode", "")
        if postcode and not re.fullmatch(r"[A-Za-z0-9 -]{3,10}", postcode):
            errors["postcode"] = "A postcode has 3 to 10 letters, digits, spaces or hyphens."
        if errors:
            return self._checkout_page(request, values, errors, 422)
        pickup = delivery == "pickup"
        address = {key: "" if pickup and key != "name" else values.get(key, "") for key, _ in ADDRESS_FIELDS}
        number = f"A{1001 + len(self.orders)}"
        self.orders.append({
            "number": number, "date": TODAY, "status": "processing", "items": dict(self.cart), **address,
            "country": "" if pickup else values["country"], "delivery": delivery,
            "discount_code": self.discount_code, **self._totals(self.discount_code, delivery), "cancel_reason": None})
        self.cart, self.discount_code = {}, None
        self.redirect(f"/orders/{number}", f"Thank you! Your order {number} has been placed.")

    async def order_list(self, request: web.Request) -> web.Response:
        rows = "".join(f"<tr><td>{link('/orders/' + o['number'], 'Order ' + o['number'])}</td><td>{o['date']}</td>"
                       f"<td>{esc(o['status'])}</td><td>{money(o['total'])}</td></tr>" for o in self.orders)
        body = ("<table><thead><tr><th>Order</th><th>Date</th><th>Status</th><th>Total</th></tr></thead>"
                f"<tbody>{rows}</tbody></table>")
        return self.page(request, "Your orders", body)

    def _order_page(self, request: web.Request, error: str | None = None) -> web.Response:
        order = next((o for o in self.orders if o["number"] == request.match_info["number"]), None)
        if order is None:
            raise web.HTTPNotFound()
        items = "".join(f"<li>{qty} × {link(f'/product/{sku}', PRODUCTS[sku].name)}</li>"
                        for sku, qty in order["items"].items())
        where = (", ".join(esc(order[k]) for k in ("street", "postcode", "city", "country"))
                 if order["delivery"] != "pickup" else "collect from the shop")
        body = (f"{error_summary({'reason': error} if error else {})}<p>Placed on {order['date']}; status: "
                f"{esc(order['status'])}.</p><ul>{items}</ul><p>Delivery: {esc(DELIVERY[order['delivery']][0])} for "
                f"{esc(order['name'])}, {where}.</p><p>Total paid: {money(order['total'])}</p>")
        if order["status"] == "processing":
            body += "<h2>Cancel this order</h2>" + form(
                f"/orders/{order['number']}/cancel",
                select("Reason for cancelling", "reason", CANCEL_REASONS, error=error)
                + button(f"Cancel order {order['number']}"))
        return self.page(request, f"Order {order['number']}", body, status=422 if error else 200)

    async def order(self, request: web.Request) -> web.Response:
        return self._order_page(request)

    async def cancel(self, request: web.Request) -> web.Response:
        number = request.match_info["number"]
        order = next((o for o in self.orders if o["number"] == number), None)
        if order is None:
            raise web.HTTPNotFound()
        if order["status"] != "processing":
            self.redirect(f"/orders/{number}", f"Order {number} is {order['status']} and can no longer be cancelled.")
        reason = (await form_data(request)).get("reason", "")
        if reason not in dict(CANCEL_REASONS[1:]):
            return self._order_page(request, "Choose a reason for cancelling.")
        order["status"], order["cancel_reason"] = "cancelled", reason
        self.redirect(f"/orders/{number}", f"Order {number} has been cancelled.")


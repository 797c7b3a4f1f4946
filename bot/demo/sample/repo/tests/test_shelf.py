import unittest

from shelf import money
from shelf.catalog.item import Item
from shelf.catalog.pricing import discount_text
from shelf.orders.cart import Cart
from shelf.orders.invoice import invoice_lines
from shelf.reports.summary import summary


class ShelfTests(unittest.TestCase):
    def test_format_amount(self) -> None:
        self.assertEqual(money.format_amount(1234), "$12.34")
        self.assertEqual(money.format_amount(-5), "-$0.05")

    def test_cart_and_invoice(self) -> None:
        cart = Cart()
        cart.add("tea", 350, 2)
        cart.add("cup", 1200)
        self.assertEqual(cart.total_text(), "$19.00")
        self.assertEqual(invoice_lines(cart)[-1], "Total: $19.00")
        self.assertEqual(invoice_lines(cart)[0], "2 x tea @ $3.50 = $7.00")

    def test_catalog(self) -> None:
        self.assertEqual(Item("t1", "Tea", 350).label(), "Tea ($3.50)")
        self.assertEqual(discount_text(1000, 25), "$7.50 (25% off)")

    def test_reports(self) -> None:
        self.assertEqual(summary({"mon": 100, "tue": 250}), "mon: $1.00\ntue: $2.50\nTotal: $3.50")


if __name__ == "__main__":
    unittest.main()

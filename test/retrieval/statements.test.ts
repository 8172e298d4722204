// How a document's text becomes statements (statements.ts, D32): OCR receipts and PDF invoices
// print a table a column at a time and a block of labels beside a block of values; the layout
// reader pairs them back, and says what each statement holds.
import { afterEach, expect, test } from "bun:test";
import { CONTACT, holdsOf, isBoilerplate, meaningsOf, SENTENCE, type Statement, statementLines } from "../../src/retrieval/statements";

const read = (text: string, type?: "email") => statementLines({ text, ...(type ? { type } : {}) }, false);
const holding = (statements: Statement[], holds: Statement["holds"]) => statements.filter((s) => s.holds === holds).map((s) => s.text);

test("a receipt's column of items beside its columns of quantities, prices and tax codes is read as rows (SROIE 253)", () => {
  const receipt = [
    "TOKYO KITCHEN SDN BHD",
    "DESCRIPTION",
    "QTY",
    "U.PRICE",
    "TOTAL",
    "TAX",
    "SALMON TERIYAKI WAZEN",
    "CHICKEN SALAD & SASHIMI GOZEN",
    "SABA TERIYAKI WAZEN",
    ...["1 X", "1 X", "2 X"],
    ...["25.90", "19.90", "25.90"],
    ...["25.90", "19.90", "51.80"],
    ...["SR", "SR", "SR"],
  ].join("\n");
  expect(holding(read(receipt), "item")).toEqual([
    "SALMON TERIYAKI WAZEN 1 X 25.90 25.90 SR",
    "CHICKEN SALAD & SASHIMI GOZEN 1 X 19.90 19.90 SR",
    "SABA TERIYAKI WAZEN 2 X 25.90 51.80 SR",
  ]);
  // The shop's name and the column headers are no items.
  expect(holding(read(receipt), "other")).toContain("TOKYO KITCHEN SDN BHD");
});

test("an item with its cells below it, one after another; an article's code before or after its name belongs to it (SROIE 233, 042)", () => {
  const receipt = [
    "51190030",
    "A1 BIHUN ISTIMEWA 3KG",
    "10 *",
    "10.00",
    "100.00 ZRL",
    "S TIGER BUCKET",
    "GTG02",
    "1",
    "55.00",
    "0+0",
    "58.30",
    "S",
  ].join("\n");
  expect(holding(read(receipt), "item")).toEqual([
    "51190030 A1 BIHUN ISTIMEWA 3KG 10 * 10.00 100.00 ZRL",
    "S TIGER BUCKET GTG02 1 55.00 0+0 58.30 S",
  ]);
});

test("a table cut by its chunk's end: its whole columns and the first cells of the cut one still make rows (SROIE 211)", () => {
  const chunk = ["1015", "PEACOCK YELLOW", "1012", "STATICE FULL IMP", "1145", "LILY CONCORDO 2H", "2", "4", "1", "12.00", "34.00"].join(
    "\n",
  );
  expect(holding(read(chunk), "item")).toEqual(["1015 PEACOCK YELLOW 2 12.00", "1012 STATICE FULL IMP 4 34.00", "1145 LILY CONCORDO 2H 1"]);
  // Fewer cells than names are no column: a heading and two names above two amounts are read as they are.
  expect(holding(read("Lunch orders\nSALMON TERIYAKI\nSABA TERIYAKI\n25.90\n19.90"), "item")).toEqual([
    "SALMON TERIYAKI 25.90",
    "SABA TERIYAKI 19.90",
  ]);
});

test("columns that do not line up with the names (a quantity column beside a price column) are not made rows", () => {
  // Two names, two cells: a count and a price are no column each.
  const receipt = "UNI WORKER'S CARD\n2000000430096\n4@\n3.10\nUNI A6 NOTE BOOK\n2000001592021\n18@\n1.30\n12.40 S\n23.40 S";
  const items = holding(read(receipt), "item");
  expect(items).toEqual(["UNI WORKER'S CARD 2000000430096 4@ 3.10", "UNI A6 NOTE BOOK 2000001592021 18@ 1.30 12.40 S 23.40 S"]);
  // A tax summary's or a footer's amounts are no item: no word names them.
  expect(holding(read("GST SUMMARY\n* : 6%\n144.98\n8.70\n: 12/13/2016 9:52:15 AM\n108.00 *"), "item")).toEqual([]);
});

test("a block of summary labels beside its block of values: each label its value, aligned at the end when the values are more (SROIE 159, 211)", () => {
  const labels = ["TOTAL SALES (EXCLUDING GST) :", "DISCOUNT :", "TOTAL GST :", "TOTAL SALES (INCLUSIVE OF GST) :", "CASH :", "CHANGE :"];
  const statements = read([...labels, "353.00", "0.00", "21.18", "374.20", "400.00", "25.80"].join("\n"));
  expect(statements.map((s) => [s.text, s.holds])).toEqual([
    ["TOTAL SALES (EXCLUDING GST) : 353.00", "tax"],
    ["DISCOUNT : 0.00", "part"],
    ["TOTAL GST : 21.18", "tax"],
    ["TOTAL SALES (INCLUSIVE OF GST) : 374.20", "total"],
    ["CASH : 400.00", "part"],
    ["CHANGE : 25.80", "part"],
  ]);
  // Three values under two labels: the first is the line's above, the labels take the last two.
  const change = read("KAIN BEBOLA\nSR\n29.80\nCASH\nCHANGE\n29.80\n50.00\n20.20");
  expect(change.map((s) => s.text)).toContain("CHANGE 20.20");
  expect(change.map((s) => s.text)).toContain("CASH 50.00");
  // Fewer values than labels: the first labels take them; a tax's header under the total waits with it.
  expect(read("ROUNDING :\nTOTAL\n( GST\n0.02\n180.10").map((s) => s.text)).toEqual(["ROUNDING : 0.02", "TOTAL 180.10", "( GST"]);
});

test("a PDF's labels printed after their values, or before them, are paired in order; a header's words are no values", () => {
  const invoice = [
    "Taylor's Store",
    "Jan 1, 2022",
    "Net 30 days",
    "Jan 31, 2022",
    "$127.50",
    "Date:",
    "Payment Terms:",
    "Due Date:",
    "Balance Due:",
    "Item Quantity Rate Amount",
  ].join("\n");
  const statements = read(invoice);
  expect(statements.filter((s) => s.label).map((s) => [s.label, s.text])).toEqual([
    ["Date", "Date: Jan 1, 2022"],
    ["Payment Terms", "Payment Terms: Net 30 days"],
    ["Due Date", "Due Date: Jan 31, 2022"],
    ["Balance Due", "Balance Due: $127.50"],
  ]);
  expect(statements.find((s) => s.label === "Balance Due")?.holds).toBe("total");
  // Dutch labels before their values.
  expect(read("Factuurdatum:\nVervaldatum:\n19-04-2014\n3-5-2014").map((s) => s.text)).toEqual([
    "Factuurdatum: 19-04-2014",
    "Vervaldatum: 3-5-2014",
  ]);
  // Column headers after labels are not their values ("INVOICE NO.:" / "RM" / "CODE" / "NAME CARD").
  const receipt = read("INVOICE NO.:\nDATE :\nCASHIER#:\nRM\nCODE\nNAME CARD\n1 X\n148.00\n148.00\nSR");
  expect(holding(receipt, "item")).toEqual(["NAME CARD 1 X 148.00 148.00 SR"]);
  // A receipt's labels whose column of values follows other labels take no values from above them.
  const payment = read("TOTAL 180.10\n0.02\n180.10\nPAYMENT :\nTOTAL PAYMENT :\nCHANGE\n> VISA\n180.10\n0.00\n180.10");
  expect(payment.map((s) => s.text)).not.toContain("PAYMENT : 0.02");
});

test("a block of labels whose values follow in order among other lines: each label takes the first line of its kind after the one above took its (Free)", () => {
  const invoice = [
    "Adresse email de contact",
    "Numéro de ligne Id.client",
    "Nom de l’abonné",
    "Adresse de l’installation",
    "Free Service Abonné",
    "75371 Paris Cedex 08",
    "alexis@via.ecp.fr",
    "FO10479674 10577874",
    "de Lattre Alexis",
    "35 RUE du logiciel libre",
    "69100 VILLEURBANNE",
    "Facture n°562044387 du 02 Juillet 2015",
  ].join("\n");
  const statements = read(invoice);
  expect(statements.filter((s) => s.label).map((s) => s.text)).toEqual([
    "Adresse email de contact alexis@via.ecp.fr",
    "Numéro de ligne Id.client FO10479674 10577874",
    "Nom de l’abonné de Lattre Alexis",
    "Adresse de l’installation 35 RUE du logiciel libre 69100 VILLEURBANNE",
  ]);
  expect(statements.find((s) => s.label === "Adresse de l’installation")?.holds).toBe("address");
  // The sender's address between the labels and their values is no label's.
  expect(statements.map((s) => s.text)).toContain("Free Service Abonné 75371 Paris Cedex 08");
});

test("a date's label takes the date a line or two below it, past another label's value, not past another date's label (QualityHosting, Saeco)", () => {
  const dated = read("Rechnungsdatum\nKundennr.30064443\n7. Mai 2014\n47774");
  expect(dated[0]).toMatchObject({ text: "Rechnungsdatum 7. Mai 2014", label: "Rechnungsdatum", meanings: ["issued"] });
  expect(dated.map((s) => s.text)).not.toContain("7. Mai 2014");
  // "Vervaldatum" is the date's label, not the header of columns above the values' line.
  const saeco = read("Klant Order FactuurFactuur datum\nSCONL000000444 VF1005193039SCONL0303006280999\nVervaldatum\n22-9-2022");
  expect(saeco.filter((s) => s.label).map((s) => s.text)).toEqual(["Vervaldatum 22-9-2022"]);
  // Outside a block of labels, a code's or a name's label takes no line past the one under it: a receipt's codes are its items'.
  const receipt = read("B CODE\nAMT\nALL SOFT DRINK CAN\n9556570105139\n1\n2.50\n2.50S");
  expect(receipt.map((s) => s.text)).not.toContain("B CODE 9556570105139");
  // A line of a label and its value is no value of the label above it; a shop named "TIME LESS" is no label.
  expect(read("TIME LESS KITCHENETTE SDN BHD\nDATE: 2018-03-23").map((s) => s.text)).toEqual([
    "TIME LESS KITCHENETTE SDN BHD",
    "DATE: 2018-03-23",
  ]);
});

test("a PDF's value printed against its label after it is read as 'Label: value'; two pairs printed against each other are two statements (Coolblue)", () => {
  const invoice =
    "29 maart 2014Orderdatum:\n992288600Factuurnummer:\nSubtotaal € 4.904,94Exclusief BTW € 4.053,67\nApple MacBook Pro Retina 15,4'' 256 GB 1";
  expect(read(invoice).map((s) => s.text)).toEqual([
    "Orderdatum: 29 maart 2014",
    "Factuurnummer: 992288600",
    "Subtotaal € 4.904,94",
    "Exclusief BTW € 4.053,67",
    "Apple MacBook Pro Retina 15,4'' 256 GB 1",
  ]);
  // A value ending in a stop or a comma, a label in capitals or with a space before its colon (Flipkart).
  expect(read("WS Retail Services Pvt. Ltd.,Sold By :\n29670869006VAT/TIN:\nAAACW8725FSD001Service tax #:").map((s) => s.text)).toEqual([
    "Sold By: WS Retail Services Pvt. Ltd.",
    "VAT/TIN: 29670869006",
    "Service tax #: AAACW8725FSD001",
  ]);
  expect(holdsOf("Sold By")).toBe("person");
});

test("two columns of a text's layout on one line, a run of spaces before the second's label, are two statements, each with its label's meaning (Orlen)", () => {
  const line = `Faktura nr: F 1234K20/1234/12${" ".repeat(60)}Data wystawienia: 2021-01-01`;
  const statements = read(`${line}\nNIP:               774-00-01-454`);
  expect(statements.map((s) => [s.text, s.meanings])).toEqual([
    ["Faktura nr: F 1234K20/1234/12", ["invoiceNumber"]],
    ["Data wystawienia: 2021-01-01", ["issued"]],
    ["NIP:               774-00-01-454", undefined],
  ]);
});

test("an address printed over several lines is one statement holding an address, in each language's street words", () => {
  const receipt = read(
    "MPH BOOKSTORES\nMPH ONE UTAMA PHASE 2\nLOT S319, 2ND FLOOR,\n1 UTAMA SHOPPING CENTRE,\nNO1, LEBUH BANDAR UTAMA,47800 P.JAYA\nTEL:03-77259003",
  );
  expect(holding(receipt, "address")).toEqual(["LOT S319, 2ND FLOOR, 1 UTAMA SHOPPING CENTRE, NO1, LEBUH BANDAR UTAMA,47800 P.JAYA"]);
  // The name above an address is whose it is.
  expect(holding(read("QualityHosting AG\nUferweg 40-42\nD-63571 Gelnhausen"), "address")).toEqual([
    "QualityHosting AG Uferweg 40-42 D-63571 Gelnhausen",
  ]);
  expect(holding(read("Free SAS\n8 rue de la Ville l'Évèque\n75008 Paris"), "address")).toEqual([
    "Free SAS 8 rue de la Ville l'Évèque 75008 Paris",
  ]);
  // A priced line naming a mall is no address.
  expect(holding(read("MALL PARKING 2.00"), "address")).toEqual([]);
});

test("an address's label and the lines below it are one statement holding an address, up to its town's line, in each language (invoices)", () => {
  // Flipkart: a label alone, a name and four lines; the phone under it is no line of it.
  const shipping = read(
    "Shipping Address\nAnushrut Singh\n3/64, Vishwas Khand,Gomti Nagar,,\nnear Fun republic mall and nehru\nenclave.\nLucknow 226010 Uttar Pradesh\nPhone: 8756390642",
  );
  expect(shipping.filter((s) => s.holds === "address").map((s) => [s.label, s.text])).toEqual([
    [
      "Shipping Address",
      "Shipping Address Anushrut Singh 3/64, Vishwas Khand,Gomti Nagar,, near Fun republic mall and nehru enclave. Lucknow 226010 Uttar Pradesh",
    ],
  ]);
  // Orlen: "Adres:" and the lines printed under its value, up to the station's town; the next label ends it.
  const orlen = read(
    "Adres:             Chemików 7 09-411 Płock\n                   Stacja Paliw Nr 4445\n                   58-100 Słotwina\nNabywca:           GŁÓWNY URZĄD STATYSTYCZNY",
  );
  expect(holding(orlen, "address")).toEqual(["Adres:             Chemików 7 09-411 Płock Stacja Paliw Nr 4445 58-100 Słotwina"]);
  expect(holding(orlen, "person")).toEqual(["Nabywca:           GŁÓWNY URZĄD STATYSTYCZNY"]);
  // Saeco: two columns' labels on one line, a street before its number, a Dutch postcode, the country under it.
  expect(holding(read("Factuuradres Afleveradres\nbosd\nFakestreet 46\n3500 MJ Utrecht\nNederland\nKlant Order"), "address")).toEqual([
    "Factuuradres Afleveradres bosd Fakestreet 46 3500 MJ Utrecht Nederland",
  ]);
  // Netpresse: a footer's fields set apart by dashes; the registered office's line is an address, its phone and e-mail are not in it.
  const footer = read(
    "NETPRESSE\nSiège social : 16 rue Mollien - 92100 BOULOGNE – Tél : 01 71 17 61 67 – annonce@publicationannoncelegale.fr",
  );
  expect(footer.filter((s) => s.holds === "address").map((s) => [s.label, s.text])).toEqual([
    ["Siège social", "Siège social : 16 rue Mollien - 92100 BOULOGNE"],
  ]);
  expect(footer.map((s) => s.text)).toContain("Tél : 01 71 17 61 67");
  // Azure Interior: a street, a US town and ZIP, the country, and whose address it is.
  expect(holding(read("Global Wholesaler\nAzure Interior\n4557 De Silva St\nFremont CA 94538\nUnited States"), "address")).toEqual([
    "Azure Interior 4557 De Silva St Fremont CA 94538 United States",
  ]);
});

test("'NO.' before a number is no sentence's end: an address is said whole (Flipkart's warehouse, SROIE 007)", () => {
  for (const line of ["Warehouse Address: NO. 42/1 & 43, KACHERAKANAHALLI VILLAGE", "NO. 343, JALAN KURAU, SUNGAI RENGIT"])
    expect(line.split(SENTENCE)).toEqual([line]);
  expect("It was closed. NO. Not again.".split(SENTENCE)).toEqual(["It was closed.", "NO. Not again."]);
});

test("a day's ordinal stop before its month ends no sentence: a German date is one date (QualityHosting)", () => {
  for (const line of ["Rechnungsdatum 7. Mai 2014", "Lieferdatum: 21. MÄRZ 2014", "Datum 1. januar 15"])
    expect(line.split(SENTENCE)).toEqual([line]);
  // A number ending a sentence before another sentence is still an end.
  expect("The room is 12. May we meet there?".split(SENTENCE)).toEqual(["The room is 12.", "May we meet there?"]);
  expect("Wir liefern am 7. Danach folgt die Rechnung.".split(SENTENCE)).toEqual(["Wir liefern am 7.", "Danach folgt die Rechnung."]);
  // Abbreviations of the tables, as written, capitalised and in capitals.
  for (const line of ["Factuur nr. 12 van Coolblue", "Summe inkl. MwSt 19,00", "TOTAL INCL. GST 12.00", "Rechnung Nr. 42"])
    expect(line.split(SENTENCE)).toEqual([line]);
  expect(read("Rechnungsdatum               7. Mai 2014\nZahlungsziel 21.05.14").map((s) => s.text)).toContain(
    "Rechnungsdatum               7. Mai 2014",
  );
});

test("a mail header's names and a street's words come from the language tables", () => {
  // Notes writes who sent a message for its author under "From:": a header line, no answer.
  for (const line of ["Sent by: Sherri Sera", "Sent by:\tJeff Dasovich", "From: Jeff Dasovich on 04/13/2001 12:34 PM"])
    expect([line, isBoilerplate(line)]).toEqual([line, true]);
  expect(isBoilerplate("The memo was sent by Sherri Sera on Monday.")).toBe(false);
  // A number, a capitalised name and a street's word; a street's compound and its number: contact lines.
  for (const line of ["4557 De Silva St", "12 Abbey Way", "8 Grand Boulevard", "Hauptstraße 12", "Marktplatz 3", "Keizersgracht 101"])
    expect([line, isBoilerplate(line)]).toEqual([line, true]);
  // A street's word too ambiguous alone is no address line: a doctor, a drive bought.
  expect(read("Flash Drive\nDr. Jones will call").filter((s) => s.holds === "address")).toEqual([]);
});

test("a code under a label naming a number or a code, without its colon, is that label's value, not the next line's prefix (OYO)", () => {
  const receipt = ["Rooms", "1", "Booking ID", "IBZY2087", "Payment Mode", "Cash at Hotel"].join("\n");
  expect(read(receipt).map((s) => s.text)).toEqual(["Rooms 1", "Booking ID IBZY2087", "Payment Mode", "Cash at Hotel"]);
  // Under another label the code is still the prefix of the item named after it.
  expect(read(["Hotel Details", "GTG02", "SALMON TERIYAKI"].join("\n")).map((s) => s.text)).toEqual([
    "Hotel Details",
    "GTG02 SALMON TERIYAKI",
  ]);
});

test("a table's header, or another label's value naming a place word, is no address", () => {
  const invoice = read(
    "Description Quantity Unit Price Disc.% Taxes Amount\nIncoterm: DPU - DELIVERED AT PLACE UNLOADED\nPayment terms: 15 Days",
  );
  expect(holding(invoice, "address")).toEqual([]);
  // An article's number after its name is no postcode ("IBZY2087 Payment Mode").
  expect(holding(read("Booking ID\nIBZY2087 Payment Mode\nCash at Hotel"), "address")).toEqual([]);
});

test("a label alone, its value under it after a colon, or after a label's spaced colon: a person's label holds the person (SROIE 419, 603)", () => {
  const becon = read(["TAX INVOICE: 0017756", "CASHIER", ": NORLIDA MOHD RASHDI", "POS NO", ": 181", "NAME", ": SIA BAN YI"].join("\n"));
  expect(holding(becon, "person")).toEqual(["CASHIER : NORLIDA MOHD RASHDI", "NAME : SIA BAN YI"]);
  expect(becon.find((st) => st.text === "POS NO : 181")?.label).toBe("POS NO");
  const yewChuan = read(["TAX INVOICE", "BILL TO :", "SUCI ALAM JAYA TRANSPORT", "NO 1 JALAN AMAN 2", "CASHIER: USER"].join("\n"));
  expect(yewChuan.find((st) => st.label === "BILL TO")).toMatchObject({ text: "BILL TO : SUCI ALAM JAYA TRANSPORT", holds: "person" });
});

test("a code under a label alone is the label's value, not the prefix of the line after it (Azure Interior)", () => {
  const texts = read("Reference:\nCUSTREF123\nSubtotal $ 262.90").map((s) => s.text);
  expect(texts).toEqual(["Reference: CUSTREF123", "Subtotal $ 262.90"]);
});

test("an item's code and cells printed before its name are its row (SROIE 003, 007)", () => {
  const bag = read("ITEM\nQTY\nS/PRICE\nAMOUNT\nTAX\nE8318\n1\n80.91\n80.91\nSR\nELEGANT SCHTR BAG 15\nTOTAL QTY\n1");
  expect(holding(bag, "item")).toEqual(["ELEGANT SCHTR BAG 15 E8318 1 80.91 80.91 SR"]);
  // A total's word heading a column after another header ("RM(TOTAL)") is a header, not a label taking the cells.
  const crocs = read("ITEM/DESC.\nQTY U.PRICE RM(TOTAL)\n4132\n1\n20.00\n20.00\nCROCS 300X17 TUBES\nSUB TOTAL :\n20.00");
  expect(holding(crocs, "item")).toEqual(["CROCS 300X17 TUBES 4132 1 20.00 20.00"]);
  // A code before cells with no name after them stays as it is.
  expect(holding(read("E8318\n1\n80.91\nTOTAL :\n80.91"), "item")).toEqual([]);
});

test("an item's name, its '#' article number, 'qty @ price' and its taxed amount are one row (SROIE 419)", () => {
  const becon = read(
    [
      "PRODUCT NAME",
      "CODE",
      "QTY @ U/(RM)",
      "GST",
      "TOTAL(RM)",
      'PAYMENT VOUCHER UEW 6" X 7 " (5\'S/PACK)',
      "#1011801-5",
      "18 @ 7.30",
      "SR",
      "131.40",
      "CD-R MAXELL (MX-CDR) 100'S",
      "#1120221",
      "1 @ 92.80",
      "SR",
      "92.80",
      "SUB TOTAL",
      "247.55",
    ].join("\n"),
  );
  expect(holding(becon, "item")).toEqual([
    'PAYMENT VOUCHER UEW 6" X 7 " (5\'S/PACK) #1011801-5 18 @ 7.30 SR 131.40',
    "CD-R MAXELL (MX-CDR) 100'S #1120221 1 @ 92.80 SR 92.80",
  ]);
  // The column headers above take no item's cells; a day is no article number.
  expect(becon.some((st) => st.label === "GST" || st.label === "TOTAL(RM)")).toBe(false);
  expect(read("DATE :\n13-09-2017").map((s) => s.text)).toEqual(["DATE : 13-09-2017"]);
});

test("a discount's label and cells under an item are the item's (SROIE 001); a tax summary's row is a tax, no item (SROIE 159)", () => {
  const lamp = read(
    "DESC/ITEM\nQTY\nPRICE\nAMT(RM)\nGF-TABLE LAMP/STITCH <I>\n62483\n1\n55.90\n55.90\n@DISC\n10.00%\n-5.59\n#TOTAL QTY\n2",
  );
  expect(holding(lamp, "item")).toEqual(["GF-TABLE LAMP/STITCH <I> 62483 1 55.90 55.90 @DISC 10.00% -5.59"]);
  // In Dutch, German, French too; a discount under no item is left as it is.
  expect(holding(read("KOFFIE\n1\n3.50\nKorting\n-0.50"), "item")).toEqual(["KOFFIE 1 3.50 Korting -0.50"]);
  expect(read("Rabatt\n-0.50").map((s) => s.holds)).not.toContain("item");
  expect(["SR = 6%", "S- 6% GST", "SR @ 6%"].map(holdsOf)).toEqual(["tax", "tax", "tax"]);
  expect(read("GST SUMMARY\nAMOUNT RM\nTAX RM\nSR = 6%\n28.11").find((s) => s.text.startsWith("SR"))?.holds).toBe("tax");
});

test("a quantity printed before its item's name, the price after it, is the next item's (SROIE 592)", () => {
  const check = read("1\nKUO POH (C) (2 PAX)\n6.00\n2\nTEA EXTRA PERSON (1 PAX)\n2.00\n1\nTONG HOU\n10.00\nSUBTOTAL :\n18.00");
  expect(holding(check, "item")).toEqual(["KUO POH (C) (2 PAX) 6.00", "2 TEA EXTRA PERSON (1 PAX) 2.00", "1 TONG HOU 10.00"]);
  // A quantity after the price, the next line no price: the quantity is the item's own.
  expect(holding(read("DOLE PINEAPPLE\n7.90\n3\nTOTAL :\n23.70"), "item")).toEqual(["DOLE PINEAPPLE 7.90 3"]);
});

test("a label's meaning is the same in each language: the due date is Vervaldatum, Zahlungsziel, échéance; the total Gesamtbetrag, Totaal", () => {
  expect(["Due Date", "Vervaldatum", "Zahlungsziel", "Date limite de paiement", "Termin płatności"].map(meaningsOf)).toEqual([
    ["due"],
    ["due"],
    ["due"],
    ["due"],
    ["due"],
  ]);
  expect(["Total EUR", "Totaal", "Gesamtbetrag", "Należność ogółem"].map(meaningsOf)).toEqual([["total"], ["total"], ["total"], ["total"]]);
  expect(["Factuurdatum", "Invoice Date", "Data wystawienia", "Rechnungsdatum"].map(meaningsOf)).toEqual([
    ["issued"],
    ["issued"],
    ["issued"],
    ["issued"],
  ]);
  expect(meaningsOf("Exclusief BTW")).toEqual(["tax", "net"]);
  expect(meaningsOf("montant ht")).toEqual(["total", "net"]);
  // A statement carries its label's meaning; a word inside another is none ("duet" is no "due").
  expect(read("Vervaldatum\n22-9-2022")[0]?.meanings).toEqual(["due"]);
  expect(meaningsOf("a duet")).toEqual([]);
});

test("what a label's value is, by the tables' rows in each language", () => {
  expect(["TOTAL", "Totaal", "Gesamtbetrag", "Należność ogółem", "Balance Due"].map(holdsOf)).toEqual([
    "total",
    "total",
    "total",
    "total",
    "total",
  ]);
  expect(["GST PAYABLE", "BTW 21%", "TVA", "MwSt."].map(holdsOf)).toEqual(["tax", "tax", "tax", "tax"]);
  expect(["SERVER", "Bill To", "Kunde", "Nabywca", "Klant", "CASHIER"].map(holdsOf)).toEqual([
    "person",
    "person",
    "person",
    "person",
    "person",
    "person",
  ]);
  expect(["VISA", "PAYMENT"].map(holdsOf)).toEqual(["payment", "payment"]);
  expect(["CHANGE", "SUBTOTAL", "DISCOUNT"].map(holdsOf)).toEqual(["part", "part", "part"]);
  // A label and its value on one line hold what the label says.
  expect(read("SERVER: PETER").map((s) => s.holds)).toEqual(["person"]);
});

test("a mail's lines are prose: no layout is read into them", () => {
  const mail = "Lunch orders\nSALMON TERIYAKI\nSABA TERIYAKI\n25.90\n19.90";
  expect(holding(read(mail, "email"), "item")).toEqual([]);
  expect(holding(read(mail), "item")).toEqual(["SALMON TERIYAKI 25.90", "SABA TERIYAKI 19.90"]);
});

// Linear work, by counting: the characters every pattern is tried on (RegExp exec and test) grow
// as the text does, on hostile layouts (runs of lines; a 1 MB line).
const realExec = RegExp.prototype.exec;
const realTest = RegExp.prototype.test;
let tried = 0;
afterEach(() => {
  RegExp.prototype.exec = realExec;
  RegExp.prototype.test = realTest;
});
const charsTried = (text: string) => {
  tried = 0;
  RegExp.prototype.exec = function (this: RegExp, s: string) {
    tried += String(s).length;
    return realExec.call(this, s);
  };
  RegExp.prototype.test = function (this: RegExp, s: string) {
    tried += String(s).length;
    return realTest.call(this, s);
  };
  try {
    statementLines({ text }, false);
  } finally {
    RegExp.prototype.exec = realExec;
    RegExp.prototype.test = realTest;
  }
  return tried;
};

test("the layout reader's work grows linearly: runs of names, cells, labels and codes, and a 1 MB line", () => {
  const layouts: Array<[string, (n: number) => string]> = [
    ["items with their cells", (n) => "SALMON TERIYAKI\n1 X\n25.90\nSR\n".repeat(n)],
    ["a column of names, then of cells", (n) => `${"SALMON TERIYAKI\n".repeat(n)}${"25.90\n".repeat(n)}`],
    ["a block of labels, then of values", (n) => `${"TOTAL:\n".repeat(n)}${"25.90\n".repeat(n)}`],
    ["values, then a block of labels", (n) => `${"Jan 1, 2022\n".repeat(n)}${"Due Date:\n".repeat(n)}`],
    ["codes before names", (n) => "2000001592021\nNAME CARD\n".repeat(n)],
    ["summary labels, then cells", (n) => `${"CHANGE\n".repeat(n)}${"1.00\n".repeat(n)}`],
    ["one long line beside cells", (n) => `${"A".repeat(20 * n)}\n1 X\n25.90\nTOTAL :\n${"9".repeat(20 * n)}`],
    ["an address's label, then its lines", (n) => `Shipping Address\n${"Fakestreet 46\n".repeat(n)}`],
    ["address lines under names", (n) => "Azure Interior\n4557 De Silva St\nFremont CA 94538\nUnited States\n".repeat(n)],
    ["codes, cells, then names", (n) => "E8318\n1\n80.91\nELEGANT SCHTR BAG\n".repeat(n)],
    ["items and their discounts", (n) => "TABLE LAMP\n1\n55.90\n@DISC\n10.00%\n-5.59\n".repeat(n)],
    ["quantities before names", (n) => "1\nKUO POH\n6.00\n".repeat(n)],
    ["a footer's fields", (n) => `${"Siège social : 16 rue Mollien – Tél : 01 71 17 61 67 – ".repeat(n)}x`],
    ["a block of date labels, then dates", (n) => `${"Rechnungsdatum\n".repeat(n)}${"7. Mai 2014\n".repeat(n)}`],
    [
      "labels of each kind among other lines",
      (n) => "Adresse email de contact\nNuméro de ligne Id.client\nNom de l'abonné\nAdresse\nFree\n".repeat(n),
    ],
  ];
  // Counted, not timed, so a few hundred lines suffice: the characters tried per character are the
  // same from 10 to 50,000 repeats of each layout (measured), and a run re-tested as it grows reads
  // 4 to 6 times more per character at 800 repeats than at 100 (34 to 50 times in all), which is
  // 25 to 41 times in all at 400 against 50 (its cost a + b·n per character: b·100 is 0.2-0.9 a).
  for (const [name, text] of layouts) {
    const small = charsTried(text(50));
    const large = charsTried(text(400));
    // Eight times the text, about eight times the characters tried (quadratic work: sixty-four times).
    expect([name, large / small < 12]).toEqual([name, true]);
  }
  // A hundred times the text, tried about as often per character: 10,000 lines of items, and a 1 MB line.
  for (const [name, text, n] of [
    ["10,000 lines of items", layouts[0]![1], 2_500],
    ["a 1 MB line", layouts[6]![1], 50_000],
  ] as const) {
    const per = (k: number) => charsTried(text(k)) / text(k).length;
    expect([name, per(n) < 1.5 * per(n / 100)]).toEqual([name, true]);
  }
}, 120_000);

test("a phone number after its label in any language of the tables is a contact line, never an answer unless one is asked", () => {
  for (const line of ["Tel. 020 123 4567", "Tél. : 01 23 45 67 89", "Telefon: +49 30 1234567", "Kom. 600 123 456", "T: (870) 931-0505"])
    expect({ line, contact: CONTACT[0]!.test(line) }).toEqual({ line, contact: true });
  for (const line of ["Total 020 123 4567", "Items: 12", "Telegram from Tom"])
    expect({ line, contact: CONTACT[0]!.test(line) }).toEqual({ line, contact: false });
});

test("a block of a receipt's labels pairs its values with the labels that lack one: a label holding its own count takes none", () => {
  // SROIE 525 (AEON): seven labels, one of them with its count, then six values.
  const aeon = [
    "SUB-TOTAL",
    "TOTAL SALES INCL GST",
    "ROUNDING ADJ",
    "TOTAL AFTER ADJ INCL GST",
    "CASH",
    "ITEM COUNT 12",
    "CHANGE AMT",
    "127.37",
    "127.37",
    "-0.02",
    "127.35",
    "150.00",
    "22.65",
  ].join("\n");
  const texts = read(aeon).map((s) => s.text);
  expect(texts).toContain("CHANGE AMT 22.65");
  expect(texts).toContain("CASH 150.00");
  expect(texts).toContain("ITEM COUNT 12");
  expect(texts).toContain("TOTAL AFTER ADJ INCL GST 127.35");
});

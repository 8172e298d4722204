// Words as data, per language the data speaks (D32): English, Dutch, French, German, Polish. Each
// table is what a kind of word is; the patterns of amounts.ts, answer.ts and conditions.ts are
// built from them, so a label, a noun or a language is added here as one row.

export type Language = "en" | "nl" | "fr" | "de" | "pl";
export type Table = Record<Language, readonly string[]>;

/** Every row of a table, whatever its language. */
export const all = (table: Table): string[] => Object.values(table).flat();

/**
 * A priced line's first word that says it is no item bought: a payment, a card, an adjustment, a
 * charge, a tax code's summary ("SR @ 6%", "ZRL" on Malaysian receipts), a deposit or a tip.
 */
export const NOT_AN_ITEM_LABELS: Table = {
  en: [
    "payment",
    "paid",
    "card",
    "master",
    "visa",
    "credit",
    "debit",
    "adj",
    "adjustment",
    "service charge",
    "service chrg",
    "amount",
    "balance",
    "average",
    "sr @",
    "zr",
    "zrl",
    "tax code",
    "deposit",
    "tip",
  ],
  nl: [],
  fr: ["ttc"],
  de: [],
  pl: [],
};

/** A record's total: what "how much" asks. */
export const TOTAL_LABELS: Table = {
  en: ["total", "grand total", "amount due", "amt due", "amount payable", "balance due", "to pay"],
  nl: ["totaal", "te betalen"],
  fr: ["montant", "totale"],
  de: ["totalbetrag", "gesamt", "gesamtbetrag", "summe"],
  pl: ["ogółem", "należność"],
};

/**
 * Part of a total, before tax, or a total of something else (items, points, savings, the change
 * given): read as a word's start ("discounts", "tendered"), `exact` ones as whole words.
 */
export const PART_OF_TOTAL_LABELS: Table = {
  en: [
    "subtotal",
    "sub-total",
    "net amount",
    "before tax",
    "qty",
    "quantity",
    "point",
    "saving",
    "discount",
    "change",
    "rounding",
    "tendered",
    "cash",
  ],
  nl: ["subtotaal", "exclusief", "excl"],
  fr: ["hors taxe"],
  de: ["zwischensumme"],
  pl: [],
};
/** Parts of a total that are whole words only: "HT" is no "http", "items" no "itemised". */
export const PART_OF_TOTAL_WORDS: Table = { en: ["exc", "item", "items"], nl: [], fr: ["HT"], de: [], pl: [] };

/** Names of a tax on a sale. */
export const TAX_NOUNS: Table = {
  en: ["gst", "vat", "tax"],
  nl: ["btw"],
  fr: ["tva"],
  de: ["mwst", "ust", "mehrwertsteuer", "umsatzsteuer"],
  pl: ["vat", "podatek", "podatku"],
};
/** Words before a tax that make it part of the total stated ("TOTAL INCLUDING GST"), not a tax line. */
export const INCLUDING: Table = {
  en: ["incl", "incl.", "including", "inclusive", "inclusive of"],
  nl: ["inclusief"],
  fr: [],
  de: ["inkl", "inkl."],
  pl: [],
};

/** Nouns of money, countable: an amount compared where they are asked about is money ("invoices over 1000"). Plural by -s or -es. */
export const MONEY_NOUNS: Table = {
  en: ["invoice", "receipt", "bill", "expense", "order", "payment", "purchase", "cost", "price"],
  nl: ["factuur", "facturen", "bon", "bonnen", "bestelling", "bestellingen", "betaling", "betalingen", "aankoop", "aankopen", "prijzen"],
  fr: ["facture", "reçu", "ticket", "commande", "paiement", "achat", "dépense"],
  de: [
    "rechnung",
    "rechnungen",
    "quittung",
    "quittungen",
    "beleg",
    "belege",
    "bestellung",
    "bestellungen",
    "zahlung",
    "zahlungen",
    "preise",
  ],
  pl: ["faktura", "faktury", "fakturze", "paragon", "paragony", "zamówienie", "zamówienia", "płatność", "zakup", "zakupy", "ceny"],
};
/**
 * Words naming an amount of money: a question naming one asks an amount ("the total", "how much
 * it cost", "het bedrag"). Not "betaald": "Tot wanneer moet … betaald worden?" asks a date, "Hoe is
 * … betaald?" a way of paying (answers.ts, train half); English "spent" and "paid" as pinned before.
 */
export const MONEY_WORDS: Table = {
  en: ["total", "amount", "cost", "price", "spent", "paid", "bill", "discount", "balance"],
  nl: ["totaal", "bedrag", "kosten", "kostte", "prijs"],
  fr: ["total", "montant", "coût", "coûte", "prix"],
  de: ["betrag", "gesamtbetrag", "kosten", "kostet", "preis"],
  pl: ["kwota", "kwoty", "koszt", "cena"],
};
/** Money changing hands: an amount compared beside one is money ("spend over 100"). */
export const SPENDING: Table = {
  en: ["spend", "spent", "pay", "paid", "charged"],
  nl: ["uitgegeven", "betaald"],
  fr: ["dépensé", "payé"],
  de: ["ausgegeben", "bezahlt"],
  pl: ["wydano", "zapłacono", "zapłaciłem", "wydałem"],
};

/** Things counted: a number right before one is a count, not money ("more than 5 orders", "2 days", "30 votes"). Plural by -s or -es. */
export const COUNTED: Table = {
  en: [
    "item",
    "piece",
    "unit",
    "vote",
    "track",
    "song",
    "album",
    "customer",
    "client",
    "employee",
    "person",
    "people",
    "user",
    "time",
    "line",
    "page",
    "message",
    "mail",
    "email",
    "file",
    "document",
    "second",
    "minute",
    "hour",
    "day",
    "week",
    "month",
    "year",
    "percent",
    "litre",
    "liter",
    "gallon",
    "kilogram",
    "kg",
  ],
  nl: [
    "stuk",
    "stuks",
    "artikel",
    "artikelen",
    "klanten",
    "keer",
    "dag",
    "dagen",
    "week",
    "weken",
    "maand",
    "maanden",
    "jaar",
    "uur",
    "procent",
    "liter",
    "kilo",
  ],
  fr: ["article", "pièce", "client", "fois", "jour", "semaine", "mois", "an", "ans", "heure", "pour cent", "litre", "kilo"],
  de: [
    "stück",
    "artikel",
    "kunden",
    "mal",
    "tag",
    "tage",
    "tagen",
    "woche",
    "wochen",
    "monat",
    "monate",
    "jahr",
    "jahre",
    "stunde",
    "stunden",
    "prozent",
    "liter",
    "kilo",
  ],
  pl: [
    "sztuk",
    "sztuki",
    "klientów",
    "razy",
    "dni",
    "dzień",
    "tygodni",
    "miesięcy",
    "lat",
    "godzin",
    "procent",
    "litrów",
    "litry",
    "kilogramów",
  ],
};
/** A number followed by one of these and more is a part of a whole, a count ("10 of the same track"). */
export const PARTITIVE: Table = { en: ["of"], nl: ["van"], fr: ["des"], de: ["von"], pl: [] };

/** Comparing with an amount: over it. */
export const OVER: Table = {
  en: ["over", "above", "more than", "greater than", "at least", "exceeding", "exceeds", "exceed"],
  nl: ["meer dan", "boven", "boven de", "hoger dan", "minstens"],
  fr: ["plus de", "au-dessus de", "supérieur à", "supérieure à", "au moins", "dépasse", "dépassent", "dépassant"],
  de: ["über", "mehr als", "höher als", "mindestens", "übersteigt", "übersteigen"],
  pl: ["powyżej", "ponad", "więcej niż", "co najmniej", "przekracza", "przekraczają", "przekraczające"],
};
/** Comparing with an amount: under it. */
export const UNDER: Table = {
  en: ["under", "below", "less than", "fewer than", "at most"],
  nl: ["onder", "minder dan", "lager dan", "hoogstens"],
  fr: ["moins de", "en dessous de", "au-dessous de", "inférieur à", "inférieure à", "au plus"],
  de: ["unter", "weniger als", "niedriger als", "höchstens"],
  pl: ["poniżej", "mniej niż", "najwyżej"],
};

/**
 * A superlative asking for the largest of a quantity ("the highest total", "who spent the most",
 * "le plus cher"): a table sorts its rows by the column the question names, descending.
 */
export const LARGEST: Table = {
  en: ["most", "highest", "largest", "biggest", "greatest", "maximum", "top", "priciest", "costliest"],
  nl: ["grootste", "hoogste", "duurste", "meeste"],
  fr: ["plus grand", "plus grande", "plus élevé", "plus élevée", "plus cher", "plus chère", "maximum"],
  de: ["größte", "größten", "höchste", "höchsten", "teuerste", "teuersten", "meisten"],
  pl: ["największy", "największa", "największe", "najwyższy", "najwyższa", "najwyższe", "najdroższy", "najdroższa", "najdroższe"],
};
/** A superlative asking for the smallest of a quantity ("the lowest total", "the cheapest"): ascending. */
export const SMALLEST: Table = {
  en: ["least", "lowest", "smallest", "fewest", "minimum", "cheapest"],
  nl: ["kleinste", "laagste", "goedkoopste", "minste"],
  fr: ["plus petit", "plus petite", "plus bas", "plus basse", "moins cher", "moins chère", "minimum"],
  de: ["kleinste", "kleinsten", "niedrigste", "niedrigsten", "günstigste", "günstigsten", "billigste", "billigsten", "wenigsten"],
  pl: ["najmniejszy", "najmniejsza", "najmniejsze", "najniższy", "najniższa", "najniższe", "najtańszy", "najtańsza", "najtańsze"],
};
/** A superlative that asks for time, not a quantity ("the most recent"): no sorting by an amount. */
export const MOST_RECENT: Table = { en: ["most recent"], nl: [], fr: ["plus récent", "plus récente"], de: [], pl: [] };
/**
 * Words of a superlative that measure a record's size or price, which a table's one amount
 * measures ("the largest invoice", "the most expensive order"); not "the most invoices" (a count).
 */
export const SIZE_WORDS: Table = {
  en: ["largest", "biggest", "smallest", "greatest", "highest", "lowest", "expensive", "cheapest", "priciest", "costliest"],
  nl: ["grootste", "kleinste", "hoogste", "laagste", "duurste", "goedkoopste"],
  fr: ["grand", "grande", "petit", "petite", "élevé", "élevée", "cher", "chère"],
  de: ["größte", "größten", "kleinste", "kleinsten", "höchste", "höchsten", "teuerste", "teuersten", "günstigste", "billigste"],
  pl: [
    "największy",
    "największa",
    "najmniejszy",
    "najmniejsza",
    "najwyższy",
    "najwyższa",
    "najniższy",
    "najniższa",
    "najdroższy",
    "najtańszy",
  ],
};

/** Questions asking a quantity ("how much VAT"). */
export const ASKS_QUANTITY: Table = {
  en: ["how much"],
  nl: ["hoeveel"],
  fr: ["combien"],
  de: ["wie viel", "wieviel", "wie hoch"],
  pl: ["ile"],
};
/** Questions asking which thing ("what VAT did …", "what was the VAT"). */
export const ASKS_WHAT: Table = {
  en: ["what"],
  nl: ["wat", "welke"],
  fr: ["quel", "quelle", "quels", "quelles"],
  de: ["was", "welche", "welcher", "welches"],
  pl: ["jaki", "jaka", "jakie"],
};
/** Every question word: a question that has one asks by it, not by a noun phrase ("the VAT on …"). */
export const QUESTION_WORDS: Table = {
  en: ["what", "which", "who", "whom", "whose", "when", "where", "why", "how"],
  nl: ["wat", "welke", "wie", "wanneer", "waar", "waarom", "hoe"],
  fr: ["que", "quoi", "quel", "quelle", "quels", "quelles", "qui", "quand", "où", "pourquoi", "comment"],
  de: ["was", "welche", "wer", "wann", "wo", "warum", "wie"],
  pl: ["co", "jaki", "jaka", "kto", "kiedy", "gdzie", "dlaczego", "jak"],
};
/** "Is", now: "what is VAT?" asks what it is. */
export const IS: Table = {
  en: ["is", "are", "'s", "’s"],
  nl: ["is", "zijn"],
  fr: ["est"],
  de: ["ist", "sind"],
  pl: ["jest", "wynosi"],
};
/** "Was", past: "what was the VAT?" asks what it came to. */
export const WAS: Table = {
  en: ["was", "were"],
  nl: ["was", "waren"],
  fr: ["était"],
  de: ["war", "waren"],
  pl: ["był", "była", "było", "wynosił", "wynosiła"],
};
/** Verbs that follow what they ask of ("what VAT did Coolblue charge", "what GST was charged"). */
export const AUXILIARIES: Table = {
  en: ["did", "does", "do", "has", "had", "have", "was", "were", "is", "are"],
  nl: ["heb", "hebt", "heeft", "had", "staat", "stond", "is", "was"],
  fr: ["a", "ai", "as", "avons", "est", "était"],
  de: ["hat", "habe", "hatte", "steht", "stand", "ist", "war"],
  pl: ["jest", "był", "była", "wynosi"],
};
/** Articles, between a question's verb and its noun ("what was the VAT", "wat is de btw"). */
export const ARTICLES: Table = {
  en: ["the", "a", "an", "this", "that", "my", "our"],
  nl: ["de", "het", "een", "mijn"],
  fr: ["le", "la", "les", "l'", "un", "une"],
  de: ["der", "die", "das", "dem", "den", "des", "ein", "eine"],
  pl: [],
};
/** After a tax, what it is on or how it was charged: it is an amount ("the VAT on the Coolblue invoice", "la TVA sur …"). */
export const TAX_ON: Table = {
  en: ["on", "for", "of", "charged", "paid"],
  nl: ["op", "van", "bij"],
  fr: ["sur", "pour", "du"],
  de: ["auf", "für", "bei"],
  pl: ["na", "za", "od"],
};
/**
 * Words just before a date that make it the time asked for ("since 2001", "in the March of", "w
 * 2015", "za 2015": for 2015), not part of what is sought. chrono-node reads English dates only;
 * a year alone is read in any language, after these.
 */
export const TIME_CUES: Table = {
  en: ["in", "during", "since", "after", "before", "until", "till", "from", "between", "within", "dated"],
  nl: ["in", "sinds", "van", "vanaf", "tijdens", "voor", "na"],
  fr: ["en", "de", "depuis", "pendant", "avant", "après"],
  de: ["im", "in", "seit", "von", "ab", "während", "vor", "nach"],
  pl: ["w", "we", "od", "przed", "po", "za"],
};
/** Words joining a range's two ends ("from 2000 to 2001", "between 2000 and 2001", "van 2000 tot 2001", "2000 bis 2001"). */
export const RANGE_JOINS: Table = {
  en: ["to", "until", "till", "and"],
  nl: ["tot", "en"],
  fr: ["à", "au", "et"],
  de: ["bis", "und"],
  pl: ["do", "i"],
};
/** Time cues that leave one end of the time open ("since April 2014", "before 2002", "seit März"). */
export const OPEN_ENDS: Table = {
  en: ["since", "after", "before", "until", "till"],
  nl: ["sinds", "vanaf", "voor", "na"],
  fr: ["depuis", "avant", "après"],
  de: ["seit", "ab", "vor", "nach"],
  pl: ["przed", "po"],
};
/** Words before a day that make it the day of the records asked ("on 14 May", "op 2 december", "le 13 juillet", "am 21. November"). */
export const DAY_CUES: Table = {
  en: ["on", "of", "dated"],
  nl: ["op", "van"],
  fr: ["le", "du"],
  de: ["am", "vom"],
  pl: ["dnia"],
};
/**
 * A range's first word, its ends joined by RANGE_JOINS ("between 50 and 100 EUR", "tussen 50 en
 * 100 euro", "entre 50 et 100 €", "zwischen 50 und 100 Euro", "między 50 i 100 zł"): an amount over
 * the one end and under the other.
 */
export const BETWEEN: Table = { en: ["between"], nl: ["tussen"], fr: ["entre"], de: ["zwischen"], pl: ["między", "pomiędzy"] };
/** Words of a relative date that ask for a time by themselves ("last month", "yesterday"); English, as TIME_CUES. */
export const RELATIVE_TIMES: Table = {
  en: ["last", "this", "past", "previous", "next", "ago", "yesterday", "today", "tomorrow", "recent"],
  nl: [],
  fr: [],
  de: [],
  pl: [],
};
/**
 * The days of the week, Monday first, per language: one row per day, its name and then its
 * abbreviations ("friday fri", "vrijdag vr vrij"), as questions and receipts write them ("FRI 09/02").
 */
export const WEEKDAYS: Table = {
  en: ["monday mon", "tuesday tue tues", "wednesday wed", "thursday thu thur thurs", "friday fri", "saturday sat", "sunday sun"],
  nl: ["maandag ma", "dinsdag di", "woensdag wo", "donderdag do", "vrijdag vr vrij", "zaterdag za", "zondag zo"],
  fr: ["lundi lun", "mardi mar", "mercredi mer", "jeudi jeu", "vendredi ven", "samedi sam", "dimanche dim"],
  de: ["montag mo", "dienstag di", "mittwoch mi", "donnerstag do", "freitag fr", "samstag sa", "sonntag so"],
  pl: ["poniedziałek pon", "wtorek wt", "środa śr", "czwartek czw", "piątek pt", "sobota sob", "niedziela niedz"],
};
const weekdayNames = (l: Language) => WEEKDAYS[l].map((row) => row.split(" ")[0]!);
/** Words that name a day or a time of day in a statement: weekdays, days relative to now, noon and midnight (an answer to "when"). */
export const DAY_WORDS: Table = {
  en: [...weekdayNames("en"), "today", "tomorrow", "noon", "midnight"],
  nl: [...weekdayNames("nl"), "vandaag", "morgen", "middernacht"],
  fr: [...weekdayNames("fr"), "aujourd'hui", "demain", "midi", "minuit"],
  de: [...weekdayNames("de"), "heute", "morgen", "mittag", "mitternacht"],
  pl: [...weekdayNames("pl"), "dzisiaj", "jutro", "południe", "północ"],
};
/** Questions asking a time: answered by a date or a time ("when", "wanneer", "quand", "wann", "kiedy"). */
export const ASKS_WHEN: Table = {
  en: ["when", "what time", "what day", "what date"],
  nl: ["wanneer", "hoe laat", "welke dag", "welke datum"],
  fr: ["quand", "quelle date", "quel jour", "à quelle heure"],
  de: ["wann", "welches datum", "an welchem tag", "um wie viel uhr"],
  pl: ["kiedy", "o której", "jakiego dnia"],
};
/** A deadline, as questions ask it and records label it ("until when", "tot wanneer", "Due Date", "Vervaldatum", "Zahlungsziel"). */
export const DUE: Table = {
  en: ["until when", "by when", "due", "deadline", "pay by"],
  nl: ["tot wanneer", "vervaldatum", "uiterlijk", "vervalt"],
  fr: ["jusqu'à quand", "date limite", "échéance"],
  de: ["bis wann", "zahlungsziel", "fällig", "fälligkeit"],
  pl: ["do kiedy", "termin płatności", "termin zapłaty"],
};
/** Words after which a question goes on to what it asks about ("the total of the invoice", "het bedrag van", "le montant de"). */
export const PREPOSITIONS: Table = {
  en: ["of", "for", "at", "on", "in", "with", "from", "by", "to", "about", "according"],
  nl: ["van", "bij", "op", "voor", "in", "met", "uit", "aan"],
  fr: ["de", "du", "des", "d'", "à", "au", "sur", "pour", "chez", "dans", "avec", "en"],
  de: ["von", "bei", "auf", "für", "in", "mit", "aus", "der", "des", "vom", "im", "am"],
  pl: ["na", "z", "w", "dla", "od", "u", "ze", "we", "za", "do", "po"],
};
/**
 * Words saying how a question is put, not what it is about: modal and passive verbs, reflexive and
 * declined pronouns, conjunctions ("Bis wann muss … bezahlt werden", "Do kiedy trzeba zapłacić"). Never
 * searched: as search terms they made a short question long, past the rare words' limit (rare-words.ts).
 * English's are plan.ts's stop words.
 */
export const FILLER_WORDS: Table = {
  en: [],
  nl: ["moet", "moeten", "worden", "wordt", "werd", "werden", "er", "zich", "kan", "kunnen", "zal", "zou", "en", "of", "om", "te", "tot"],
  fr: ["se", "s'", "il", "elle", "ils", "elles", "ce", "et", "ou", "doit", "faut", "peut", "été", "sont", "y"],
  de: [
    "muss",
    "müssen",
    "werden",
    "wurde",
    "wurden",
    "wird",
    "sich",
    "einer",
    "einem",
    "einen",
    "ihr",
    "ihre",
    "ihren",
    "und",
    "oder",
    "kann",
    "soll",
    "bis",
    "zu",
    "mir",
    "mich",
    "uns",
  ],
  pl: ["trzeba", "się", "czy", "są", "było", "i", "lub", "oraz", "mi", "mnie", "musi", "można"],
};
/** Who asks: not what is asked ("what did I buy", "wat heb ik gekocht"). */
export const PRONOUNS: Table = {
  en: ["i", "we", "you", "me", "us", "my", "our"],
  nl: ["ik", "we", "wij", "je", "jij", "mijn"],
  fr: ["je", "j'", "nous", "vous", "on", "mon", "ma", "mes"],
  de: ["ich", "wir", "sie", "du", "mein", "meine"],
  pl: ["ja", "my", "mój", "moja"],
};
/** Questions asking a place. */
export const ASKS_WHERE: Table = { en: ["where"], nl: ["waar"], fr: ["où"], de: ["wo", "wohin", "woher"], pl: ["gdzie"] };
/** Words before a place's name ("at the Energizer", "drop by the Energizer", "bij Coolblue"): a sentence with one answers where. */
export const AT_PLACE: Table = {
  en: ["at", "in", "by", "near"],
  nl: ["in", "bij", "te"],
  fr: ["à", "au", "chez", "dans"],
  de: ["in", "im", "bei", "am"],
  pl: ["w", "we", "przy"],
};
/** Questions asking a person. */
export const ASKS_WHO: Table = {
  en: ["who", "whom", "whose"],
  nl: ["wie"],
  fr: ["qui"],
  de: ["wer", "wem", "wen"],
  pl: ["kto", "kogo", "komu"],
};
/**
 * Verbs of writing or sending a message: who did so is its sender ("Who announced the reception?",
 * "Who was the memo sent by?", "Wer hat die Einladung geschickt?"), a mail's "From:" line answers.
 */
export const AUTHORING: Table = {
  en: [
    "sent",
    "send",
    "sends",
    "wrote",
    "write",
    "writes",
    "written",
    "announced",
    "announces",
    "invited",
    "invites",
    "signed",
    "forwarded",
  ],
  nl: ["stuurde", "gestuurd", "verstuurd", "schreef", "geschreven", "aangekondigd", "uitgenodigd", "ondertekend"],
  fr: ["envoyé", "envoie", "écrit", "annoncé", "invité", "signé"],
  de: ["geschickt", "gesendet", "geschrieben", "schrieb", "angekündigt", "eingeladen", "unterschrieben"],
  pl: ["wysłał", "wysłała", "napisał", "napisała", "ogłosił", "ogłosiła", "zaprosił", "zaprosiła", "podpisał"],
};
/**
 * Verbs of approving what a message asks ("Who approved the request?", "Wer hat den Antrag
 * genehmigt?"): the sender of the reply approving it answers ("Let's process this request."), not
 * the sender of the request it forwards.
 */
export const APPROVING: Table = {
  en: ["approved", "approves", "authorized", "authorised", "signed off"],
  nl: ["goedgekeurd", "keurde"],
  fr: ["approuvé", "validé", "autorisé"],
  de: ["genehmigt", "freigegeben", "bewilligt"],
  pl: ["zatwierdził", "zatwierdziła", "zatwierdzono"],
};
/**
 * Means of paying, as receipts and invoices print them ("> VISA", "Credit Card", "ORLEN Pay",
 * "Cash at Hotel", "Espèces"): a line naming one answers how something was paid.
 */
export const PAYMENT_MEANS: Table = {
  en: [
    "visa",
    "mastercard",
    "master card",
    "amex",
    "credit card",
    "debit card",
    "card",
    "cash",
    "paypal",
    "cheque",
    "bank transfer",
    "pay",
  ],
  nl: ["contant", "pinnen", "creditcard", "ideal", "overboeking", "rembours"],
  fr: ["carte", "carte bancaire", "espèces", "chèque", "virement", "prélèvement"],
  de: ["bar", "karte", "kreditkarte", "überweisung", "lastschrift"],
  pl: ["gotówka", "karta", "przelew"],
};
/** A mail's header naming who wrote the message under it ("From: Ken Rice@ENRON on 07/28/2000", "Von:", "De :"). */
export const SENDER_HEADERS: Table = { en: ["from"], nl: ["van"], fr: ["de"], de: ["von"], pl: ["od"] };
/** Questions asking a count (where the language tells it from "how much"). */
export const ASKS_COUNT: Table = { en: ["how many"], nl: [], fr: [], de: ["wie viele"], pl: [] };
/** Questions asking in what way or why ("How did I pay?", "Hoe is … betaald?", "Jak zapłacono?", "Warum …"): a way or a reason, not an amount. */
export const ASKS_HOW: Table = {
  en: ["how", "why"],
  nl: ["hoe", "waarom"],
  fr: ["comment", "pourquoi"],
  de: ["wie", "warum", "wieso", "weshalb"],
  pl: ["jak", "dlaczego", "czemu"],
};
/**
 * Verbs after "how" that ask what something reads or is called ("Wie lautet das Rechnungsdatum?",
 * "Hoe luidt de vervaldatum?", "Jak brzmi adres?"): such a question asks by its noun, not a way.
 */
export const NAMING_VERBS: Table = {
  en: [],
  nl: ["luidt", "luiden", "heet"],
  fr: ["s'appelle"],
  de: ["lautet", "lauten", "heißt"],
  pl: ["brzmi", "brzmią", "nazywa"],
};
/**
 * Nouns plural in form that a document states as one thing, under its label ("Zahlungsbedingungen:
 * 14 Tage netto", "opening hours"): "which" with one asks that statement, not a list. Read as a
 * compound's last part in Dutch and German.
 */
export const STATED_TERMS: Table = {
  en: ["terms", "conditions", "hours", "instructions", "details"],
  nl: ["voorwaarden", "openingstijden", "gegevens"],
  fr: ["conditions", "modalités", "horaires", "coordonnées"],
  de: ["bedingungen", "konditionen", "zeiten", "angaben"],
  pl: ["warunki", "godziny", "dane"],
};
/** Questions asking which thing: with a plural noun, a list. */
export const ASKS_WHICH: Table = {
  en: ["which", "what"],
  nl: ["welke", "welk"],
  fr: ["quels", "quelles"],
  de: ["welche", "welcher", "welches"],
  pl: ["które", "jakie"],
};
/** Nouns asking a date or a time ("the due date", "de vervaldatum", "das Zahlungsziel"). */
export const DATE_NOUNS: Table = {
  en: ["date", "dates", "day", "time", "deadline", "period"],
  nl: ["datum", "termijn", "periode"],
  fr: ["date", "jour", "période", "délai", "échéance"],
  de: ["datum", "frist", "zahlungsziel", "zeitraum"],
  pl: ["data", "dnia", "termin", "okres"],
};
/** Nouns asking a place. */
export const PLACE_NOUNS: Table = {
  en: ["address", "city", "country", "room", "office", "location", "place", "town", "located"],
  // Compounds of an address, as Dutch and German write them ("het afleveradres", "die Lieferadresse").
  nl: ["adres", "afleveradres", "bezorgadres", "factuuradres", "postadres", "stad", "land", "plaats", "gevestigd"],
  fr: ["adresse", "ville", "pays", "lieu", "siège", "salle"],
  de: ["adresse", "lieferadresse", "rechnungsadresse", "anschrift", "stadt", "land", "ort", "sitz", "raum"],
  pl: ["adres", "miasto", "kraj", "miejsce"],
};
/** Nouns asking a way to reach someone: their lines (a letterhead's, a signature's) are then the answer. */
export const CONTACT_NOUNS: Table = {
  en: ["phone", "telephone", "fax", "e-mail", "email", "website", "web site", "url", "contact"],
  nl: ["telefoon", "telefoonnummer", "e-mail", "e-mailadres", "website"],
  fr: ["téléphone", "e-mail", "courriel", "site"],
  de: ["telefon", "telefonnummer", "e-mail", "webseite"],
  pl: ["telefon", "e-mail", "strona"],
};
/** Labels a phone or fax number is printed after on an invoice or in a signature ("Tel.", "T:", "GSM"). */
export const PHONE_LABELS: Table = {
  en: ["tel", "phone", "telephone", "fax", "mobile", "cell", "t", "f", "m"],
  nl: ["telefoon", "tel", "mob", "gsm"],
  fr: ["tél", "téléphone", "portable", "fax"],
  de: ["telefon", "tel", "mobil", "handy", "fax"],
  pl: ["tel", "telefon", "kom", "faks"],
};
/** Nouns asking a record's number or code: its line answers, whatever else the question names. */
export const IDENTIFIER_NOUNS: Table = {
  en: ["number", "code", "id", "reference"],
  nl: ["nummer", "code", "referentie"],
  fr: ["numéro", "code", "référence"],
  de: ["nummer", "code", "kennung"],
  pl: ["numer", "kod"],
};
/** Nouns asking a person. */
export const PERSON_NOUNS: Table = {
  en: ["customer", "client", "name", "buyer", "seller"],
  nl: ["klant", "naam"],
  fr: ["client", "nom"],
  de: ["kunde", "name"],
  pl: ["klient", "nabywca", "sprzedawca"],
};
/**
 * A table's columns that hold a person's name ("FirstName", "last_name", "Nachname"; compared
 * without case, spaces or underscores): a row with one is a person's own row (evidence.ts). Not a
 * bare "name", which a track, a product or a company has too.
 */
export const PERSON_NAME_COLUMNS: Table = {
  en: ["first name", "last name", "full name", "surname", "given name", "family name"],
  nl: ["voornaam", "achternaam"],
  fr: ["prénom", "nom de famille"],
  de: ["vorname", "nachname", "familienname"],
  pl: ["imię", "nazwisko"],
};
/** A company's legal form or trade, as a merchant's name carries it ("SIN THYE & COMPANY", "ASO ELECTRICAL TRADING SDN BHD"). */
export const COMPANY_FORMS: Table = {
  en: ["sdn bhd", "bhd", "s/b", "company", "enterprise", "trading", "ltd", "inc", "llc", "shop", "store"],
  nl: ["b.v.", "bv", "v.o.f."],
  fr: ["sarl", "sas"],
  de: ["gmbh", "ag", "kg"],
  pl: ["sp. z o.o.", "s.a."],
};
/** Nouns asking who sold, a merchant ("Which shop sold me …", "welke winkel"): the name a receipt or an invoice opens with. */
export const MERCHANT_NOUNS: Table = {
  en: ["shop", "store", "merchant", "vendor"],
  nl: ["winkel", "leverancier"],
  fr: ["magasin", "boutique", "fournisseur"],
  de: ["geschäft", "laden", "händler"],
  pl: ["sklep", "sprzedawca"],
};
/** Buying, as a question asks what was bought ("what did I buy", "welke tablet heb ik gekocht"). */
export const BOUGHT: Table = {
  en: ["buy", "bought", "order", "ordered", "purchase", "purchased", "eat", "ate", "drink", "drank"],
  nl: ["gekocht", "besteld", "kopen"],
  fr: ["acheté", "commandé", "mangé"],
  de: ["gekauft", "bestellt"],
  pl: ["kupiono", "kupiłem", "zatankowano", "zamówiono"],
};
/** A question's first word that asks yes or no. */
export const YES_NO: Table = {
  en: ["is", "are", "was", "were", "do", "does", "did", "can", "could", "will", "has", "have", "should"],
  nl: ["is", "zijn", "heb", "heeft", "kan", "wordt"],
  fr: ["est-ce"],
  de: ["ist", "sind", "hat", "haben", "kann", "wird"],
  pl: ["czy"],
};

/** Money coming in, asked of books: income accounts' total, said as a positive amount earned (D34: income is booked negative). */
export const EARNING: Table = {
  en: ["earn", "earned", "earnings", "receive", "received"],
  nl: ["verdiend", "verdiende", "ontvangen"],
  fr: ["gagné", "reçu", "touché"],
  de: ["verdient", "erhalten", "eingenommen"],
  pl: ["zarobiłem", "zarobiłam", "otrzymałem", "otrzymałam"],
};
/** Money owed, asked of books: a liability's balance, said as a positive amount owed (D34: liabilities are booked negative). */
export const OWING: Table = {
  en: ["owe", "owed", "owing", "debt"],
  nl: ["schuld", "verschuldigd"],
  fr: ["dois", "doit", "dette"],
  de: ["schulde", "schulden", "schuld"],
  pl: ["winien", "dług", "zadłużenie"],
};
/** Money paid or earned, asked of books: a period's total is asked ("What did I pay Verizon last year?"), as by SPENDING's words. */
export const PAYING: Table = {
  en: [...SPENDING.en, "pay", ...EARNING.en],
  nl: [...SPENDING.nl, "betaalde", ...EARNING.nl],
  fr: [...SPENDING.fr, ...EARNING.fr],
  de: [...SPENDING.de, ...EARNING.de],
  pl: [...SPENDING.pl, ...EARNING.pl],
};
/** An account's balance asked ("the balance of Checking", "het saldo", "le solde"): books answer it at a date, not as a period's total (D34). */
export const BALANCE_NOUNS: Table = { en: ["balance"], nl: ["saldo"], fr: ["solde"], de: ["saldo", "kontostand"], pl: ["saldo"] };
/** "Account" itself: "my checking account" names Checking, not Liabilities:AccountsPayable (D34). */
export const ACCOUNT_NOUNS: Table = {
  en: ["account", "accounts"],
  nl: ["rekening", "rekeningen"],
  fr: ["compte", "comptes"],
  de: ["konto", "konten"],
  pl: ["konto", "rachunek", "rachunku"],
};
/**
 * A table's column headers, as documents print them above their rows ("QTY", "U/PRICE",
 * "Omschrijving", "Menge", "Ilość"): a line of these words only heads columns, it is no item.
 */
export const COLUMN_HEADERS: Table = {
  en: [
    "item",
    "items",
    "qty",
    "quantity",
    "price",
    "u",
    "p",
    "s",
    "unit",
    "amount",
    "amt",
    "tax",
    "taxes",
    "gst",
    "code",
    "taxcode",
    "desc",
    "description",
    "disc",
    "rate",
    "no",
    "rm",
    "uom",
  ],
  nl: ["omschrijving", "aantal", "prijs", "bedrag", "btw", "artikel"],
  fr: ["désignation", "description", "quantité", "qté", "prix", "montant", "tva", "ht", "ttc"],
  de: ["pos", "menge", "beschreibung", "rabatt", "vk", "preis", "ohne", "mwst", "zeilenbetrag", "betrag", "einheit"],
  pl: ["lp", "nazwa", "towaru", "jm", "ilość", "cena", "wartość", "kwota", "vat"],
};
/** A discount's label, printed under the item it takes off from ("@DISC" / "10.00%" / "-5.59", "Korting", "Rabatt"). */
export const DISCOUNT_LABELS: Table = {
  en: ["disc", "discount"],
  nl: ["korting"],
  fr: ["remise", "réduction"],
  de: ["rabatt", "nachlass"],
  pl: ["rabat", "upust"],
};
/** A receipt's tax codes, printed alone in a column beside each amount ("SR" standard rated, "ZRL", "Z" zero rated). */
export const TAX_CODES: Table = { en: ["sr", "s", "z", "zr", "zrl", "sr0", "sro", "e", "tx", "*"], nl: [], fr: [], de: [], pl: [] };
/** A document's labels of a person: the line's value is who served, sold or was billed ("SERVER: PETER", "Bill To: Taylor Riddel"). */
export const PERSON_LABELS: Table = {
  en: [
    "server",
    "cashier",
    "salesperson",
    "sales person",
    "served by",
    "sold by",
    "bill to",
    "billed to",
    "sold to",
    "customer",
    "customer name",
    "attn",
    "name",
    "guest",
  ],
  nl: ["klant", "klantnaam", "naam", "kassier", "verkoper", "t.a.v."],
  fr: ["client", "nom", "caissier", "vendeur", "facturé à"],
  de: ["kunde", "name", "kassierer", "verkäufer", "rechnungsempfänger"],
  pl: ["nabywca", "sprzedawca", "kasjer", "klient"],
};
/** A street's type, as an address names it ("De Silva St", "Weena", "rue Mollien", "Uferweg", "ul. Chemików"). */
export const STREET_WORDS: Table = {
  en: ["street", "st", "road", "rd", "avenue", "ave", "lane", "boulevard", "blvd", "plaza"],
  nl: ["straat", "weg", "laan", "plein", "gracht", "kade"],
  fr: ["rue", "avenue", "boulevard", "bd", "place", "allée", "chemin"],
  de: ["strasse", "straße", "str", "weg", "gasse", "platz", "allee"],
  pl: ["ul", "ulica", "aleja", "al", "plac"],
};
/**
 * Words of a street address, as documents print them ("LOT S319, 2ND FLOOR", "Weena 664",
 * "8 rue de la Ville", "Uferweg 40-42", "Aleja Niepodległości 208"); English rows hold the Malay
 * street words that English-language receipts in Malaysia print ("JALAN", "TAMAN", "LEBUH").
 */
export const ADDRESS_WORDS: Table = {
  en: [
    ...STREET_WORDS.en,
    "floor",
    "flr",
    "lot",
    "suite",
    "unit",
    "block",
    "blk",
    "building",
    "centre",
    "center",
    "mall",
    "jalan",
    "jln",
    "lorong",
    "taman",
    "lebuh",
    "bandar",
    "kampung",
    "persiaran",
    "lebuhraya",
    "seksyen",
  ],
  nl: STREET_WORDS.nl,
  fr: [...STREET_WORDS.fr, "cedex"],
  de: STREET_WORDS.de,
  pl: [...STREET_WORDS.pl, "os"],
};
/**
 * Street words too ambiguous alone ("Dr." a doctor, "way" a word, "Flash Drive"): a street's only
 * after a number and a capitalised name ("4557 De Silva Dr", "12 Abbey Way").
 */
export const STREET_ENDINGS: Table = { en: ["ln", "dr", "drive", "way"], nl: [], fr: [], de: [], pl: [] };
/**
 * Abbreviations whose stop ends no sentence ("Mr. Lay", "NO. 42/1", "incl. VAT", "inkl. MwSt.",
 * "nr. 12"): read as written, capitalised and in capitals.
 */
export const ABBREVIATIONS: Table = {
  en: ["Mr", "Mrs", "Ms", "Dr", "No", "Inc", "Co", "St", "vs", "incl", "excl"],
  nl: ["nr", "incl", "excl"],
  fr: [],
  de: ["Nr", "inkl"],
  pl: ["nr"],
};
/**
 * A mail's header names, as a message's header block writes them ("From:", "Sent by:", "Please
 * respond to"): such a line is never an answer. English only, as the mail here; a document's
 * "Date:" line is its own date (statements.ts), not a header.
 */
export const MAIL_HEADERS: Table = {
  en: ["from", "to", "cc", "bcc", "sent", "sent by", "date", "subject", "please respond to", "importance"],
  nl: [],
  fr: [],
  de: [],
  pl: [],
};
/**
 * A document's labels whose value is an address, on the label's line or the lines below it
 * ("Shipping Address", "Bill to Address:", "Factuuradres", "Siège social :", "Adres:"): the
 * value is one statement holding an address, the lines under the label its lines.
 */
export const ADDRESS_LABELS: Table = {
  en: ["address", "ship to", "deliver to", "registered office", "regd. office", "head office", "corporate office"],
  nl: ["adres", "factuuradres", "afleveradres", "bezorgadres", "vestigingsadres", "postadres"],
  fr: ["adresse", "siège social", "siège"],
  de: ["adresse", "anschrift", "sitz", "rechnungsadresse", "lieferadresse"],
  pl: ["adres", "siedziba"],
};
/**
 * What a document's label means, one row per language: a question asking by one language's
 * words is answered by a label in another's ("due date" and "Vervaldatum", "Gesamtbetrag" and
 * "Total", "montant HT" and "Exclusief BTW"). Each meaning is its table; a label or a question
 * holding a row of it has that meaning.
 */
export const LABEL_MEANINGS: Record<string, Table> = {
  total: TOTAL_LABELS,
  due: DUE,
  tax: TAX_NOUNS,
  net: {
    en: ["subtotal", "sub-total", "net amount", "before tax", "excluding", "excl"],
    nl: ["subtotaal", "exclusief", "excl"],
    fr: ["ht", "hors taxe", "hors taxes"],
    de: ["netto", "nettobetrag", "zwischensumme", "ohne mwst"],
    pl: ["netto", "wartość netto"],
  },
  issued: {
    en: ["invoice date", "date of issue", "issued", "issue date"],
    nl: ["factuurdatum", "factuur datum"],
    fr: ["date de facture", "date de facturation", "date d'émission"],
    de: ["rechnungsdatum", "ausgestellt", "ausstellungsdatum"],
    pl: ["data wystawienia", "wystawienia", "wystawiono"],
  },
  ordered: {
    en: ["order date", "ordered", "date of order"],
    nl: ["orderdatum", "besteldatum", "besteld"],
    fr: ["date de commande", "commandé"],
    de: ["bestelldatum", "bestellt"],
    pl: ["data zamówienia", "zamówiono"],
  },
  invoiceNumber: {
    en: ["invoice number", "invoice no", "invoice #"],
    nl: ["factuurnummer", "factuurnr"],
    fr: ["numéro de facture", "facture n°"],
    de: ["rechnungsnummer", "rechnungsnr"],
    pl: ["numer faktury", "faktura nr"],
  },
  paidBy: {
    en: ["payment method", "payment mode", "paid by", "paid through", "mode of payment"],
    nl: ["betaalwijze", "betaalmethode", "betaald met"],
    fr: ["mode de règlement", "modes de règlement", "mode de paiement"],
    de: ["zahlungsart", "zahlungsweise", "bezahlt mit"],
    pl: ["forma płatności", "sposób płatności", "zapłacono"],
  },
  seller: {
    en: ["sold by", "seller", "vendor", "supplier", "sold"],
    nl: ["verkoper", "leverancier", "verkocht"],
    fr: ["vendeur", "fournisseur", "vendu"],
    de: ["verkäufer", "lieferant", "verkauft"],
    pl: ["sprzedawca", "sprzedawcy", "dostawca", "dostawcy"],
  },
  buyer: {
    en: ["bill to", "billed to", "sold to", "buyer", "customer"],
    nl: ["koper", "klant", "afnemer"],
    fr: ["acheteur", "client", "facturé à"],
    de: ["käufer", "kunde", "rechnungsempfänger"],
    pl: ["nabywca", "nabywcy", "odbiorca"],
  },
  change: {
    en: ["change", "change due", "change amt"],
    nl: ["wisselgeld"],
    fr: ["monnaie rendue", "rendu"],
    de: ["wechselgeld", "rückgeld"],
    pl: ["reszta"],
  },
  delivery: {
    en: ["ship to", "shipping address", "delivery address", "shipped", "delivered"],
    nl: ["afleveradres", "bezorgadres", "afgeleverd", "geleverd", "bezorgd"],
    fr: ["adresse de livraison", "livré", "livrée", "livraison"],
    de: ["lieferadresse", "lieferanschrift", "geliefert"],
    pl: ["adres dostawy", "dostarczono", "dostawy"],
  },
};

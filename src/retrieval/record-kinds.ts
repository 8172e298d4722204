// Words that name a kind of record: the question's hint of where to look (plan.ts), and words
// that say nothing of what a record is about (amounts.ts).

export const MAIL_WORDS = /\b(e-?mails?|mails?|messages?|inbox|wrote|sent|replied)\b/i;
export const FILE_WORDS = /\b(invoices?|receipts?|documents?|files?|pdfs?|contracts?|spreadsheets?|reports?|bills?)\b/i;
export const ROW_WORDS = /\b(customers?|clients?|orders?|purchases?|sales)\b/i;

/** A word that only names a kind of record ("invoices", "mail", "customers"), not what it is about. */
export const namesKind = (term: string) => MAIL_WORDS.test(term) || FILE_WORDS.test(term) || ROW_WORDS.test(term);

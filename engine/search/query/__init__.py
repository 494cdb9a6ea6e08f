"""What a search asks: its inputs made safe, dates, filters, query terms, did-you-mean."""

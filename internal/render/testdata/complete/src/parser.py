def words(text):
    return text.split()

/**
 * The table of 128-bit approximations of 5^q that decimalToDouble.ts's Eisel-Lemire method reads,
 * for q from {@link SMALLEST_Q} to {@link LARGEST_Q}: four 32-bit words per q from the most
 * significant, whose top bit is set. For q >= 0 the leading 128 bits of 5^q (truncated); for q < 0
 * a 128-bit quotient 2^b / 5^-q plus one (for q >= -27 with b putting it just above 2^127; below,
 * computed with twice the bits and then truncated). This is the table the method's error bound was
 * proved for (Mushtak and Lemire, "Fast number parsing without fallback", 2023).
 *
 * Why a constant: built with BigInt it took 12 to 25 ms at the first number of every process that
 * read a JSON file (and made garbage), on the path of every `pxl pdist`. Decoded from the text below
 * it takes well under a millisecond. test/decimalToDouble.test.ts builds the table with BigInt, as
 * described above, and checks that every word here is the same.
 */

/** Range of q with a table entry: below it w * 10^q rounds to 0, above it to infinity. */
export const SMALLEST_Q = -342;
export const LARGEST_Q = 308;

/** The table's 32-bit words, big-endian, in base64 (RFC 4648). */
const FIVES = [
  '7vRT1pI71loRP6opBqE7P5VYtGYbZWX4SsfKWaQkxQe6ruF/oj6/dl15vPANLfZJ6VqZ34rOb1P02CwsEHlz3JHYoCu2wQWU',
  'eQcbm4pL6Gm2Tsg2pHFG+ZdI4oJs3uKE4+J6RE2NmLf9GxsjCBabJY5tjGqweH9y/jDw9eUOIPeyCO+FXJafT729LTNeUak1',
  '3osrZrO8RyOtLHiANeYTgosW+yAwVax2TDvLUCGvzDGt3LnoPGsXk99KviQqG7892VPoYkuF3XjXHW2tNKKvDYfUcT1vM6pr',
  'hnJkjEDlrWipyY2MywCVBmgO/a9RHxjC1Dvw7/3AukgCEr0bJWbe8oSldpX+mHRtAUu2MPdgS1elztQ7fj6RiEGeo701OF4t',
  'z0KJSl3ONepSBkysgoZ1uYGJlc56oOGyc0Pv69GUCZOh6/tCGUkaHxAU6+bF+Qv4ymb6Ep+bYKbUGibgd3dO9v0AuJdHgjjQ',
  'iSCwmJVVIrSeIHNejLFjglW0bl9dVTWwxaiQNi/dvGLrIYn3NKqDHfcStEO71St7pensdQHVI+Saa7CqVWU7LUeyM8khJTZu',
  'wQac1Oq+ifiZnsC7aW6ECvFIRAolbix2wAZw6kPKJQ2WzSqGV2TbyjgEBpJqXlcovIB1J+0+ErzGBQg3BPXs8uugknHojZdr',
  '94ZKRMYzaC6TRFuHMVh+o3qz7mr74CEduBVyaP2unkxZYOoFutgpZOYazwM9GkXfb7kkhymOM72P0MFiBjBrq6XTttR5+OBW',
  's8Txuoe8hpaPSKSJmHcYbOC2Likpq6g8MxrNq/6U3oeMcdzZugtJJZ/wwIt/HQsUr45UECiOG28H7PCuXuRN2dtx6RQysaJK',
  'yegs2fadYVCJJzGsn68Fbr4xHAg6IlzSq3D+F8eaxsptvWMKSKr0BtZNPZ25gXh9CSy7zNrVsQiF8EaCk/DrTiW79WAIxY6l',
  'p2xYIzjtJiGvKvK4CvbyTtFHbiwHKG+qGvWvZg20ruGCzKTbhHlFylDZjZ/IkO1No3/OEmWXlzzlD/EHurUooMxfwZb+/X0M',
  'HlPtSalicsj/d7H8vrzcTyXo6JwTuw96n6rPPfc2CbF3sZFhjFTprMeVgw11A4wd1Z31ue9qJBf5euPQ0kRvJUsFcyhrRK0d',
  'm+zOYoNqxXdO42f5QwrsMsLoAfskRXbVIpxB95PNpz/zogJ57VbUimtDUnV4wREPmEVBjDRWRNaDChOJa3iqqb5Wke9Ba9YM',
  'I8yYa8ZW1VPt7DZrEcbLjyy/voa37IqolLOiAuscPzl799cUMvPWqbngioOl408H2vXM2T+wzFPoWK0kj1wiydGzQA+PnP9o',
  'kTdsNtmZlb4jEAgJucIfobWFR0SP//stq9QKDCgyp4ri5pkVs//5+RbJDI8yP1FsjdAfrZB//DuuPafZf2eS47FEJ5j0n/tK',
  'mc0Rz99Bd5zdlTF/Mcf6HUBAVkPXEdWDin0+738c/FJIKDXqZmslcq0cjqte5Dtm2jJDZQAF7s/YY7JWNp1KQJC+1D5AB2qC',
  'hz5PdeIiTmhad0Sm6ASikakN41NaquICcRUV0KIFyzbTUVwoMVWagw1aW0TKhz4DhBLZmR7VgJHoWHkK/pSGwqUXj/9miuC2',
  'Ym6XTb45qHLOXXP/QC2Y4/sKPSEtyBKPgPpof4gcf4585mY0vJ0LmaE5Ap9qI59yHB//wevEToDJh0NHRKyHTqMn/7JmtWIg',
  '++kUGRXXqSJL8f+fAGK6qJ1xrI+tpsm1b3c/w2A9tKnEzhezmRB8IstVD7Q4TSHT9gGdoH9Umyt+KlOhRmBqSJnBAoRPlOD7',
  'Ltp0RMv8Qm3AMUMlY3oZOfqREVX++1MI8D2T7rxYn4h5NVWrfronypYmfHU1t2O1S8FViy80WN67sBuSgyU8op6xqu37AW8W',
  '6pwidyPui8tGXhWpecHK3JKhlYp2dRdfC/rNiewZHsm3SfrtFBJdNs75gOxnH2Z75Rx5qFkW9ISCt+EngOdAGo8xzAk3rljS',
  '0bLsuLCQiBCy/j8LhZnvB4Yfp+bctKoV373OzmcAaslnp5Hgk+HUmovWoUEAYEK94Mi7LFxtJOCuzEmRQHhTbVj66fdziG4Y',
  '2n9b9ZCWaEivOaR1UGqJnoiPmXl6XgEtbYQGyVJClgOqs3/X2PWBeMjlCHum0zuD1WBfzc8y4db7HkqakIgKZIVcO+Chf80m',
  'XPLuoJpVBn+ms0rYyd/Ab/QvqkjA6kge0GAdjvxXsIvxO5Ta8STaJoI8Enldts5XdsU9CNa3CFiiyxcXtSSB7VR2jEsMZMpu',
  'y33c3aJtomiplC9dz339Cf5dVBULCQsC0/k7NUNdfEye+lSNJuWm4cR7xQFKGm2vxrjpsHCfEJo1mrZBnKEJG/hnJByMxtTA',
  'wwFj0gPJS2KbQHaR1/xE+Hng3mNCXc8dwhCUNk37VjaYWRX8EvVC5PKUuUPheivEPm9bexeyk52XnPPKbOxbWqcFmSzuz5xC',
  'vYQwvQgncjFQxv94KoODU+zlPOxKMU69pPi/VjUkZCiUD0YTrl7RNocbd5XhNr6ZuRMXmJn2hYQo4lV7WYRuP+dX3X7AdCbl',
  'Mxrq2i/lic+QlupvOEiYTz/w0shd73YhtLylCwZavmMP7Qd6dWtTqeHrzk3H8W370+hJWRLGKJSNM2DwnPbkvWRxLderu9lc',
  'sIA5LMQ0ney9jXlNlqrPs9ygR3f1QcVn7PDXoPxVg6CJ5Cyq+UkbYPQWhsSdtXJErF031bebYjkxHCh1xSLO1dd0hcslgjrH',
  'fWMykzZrgouGqNOe93FkvK5d/5wCAzGXqFMIhrVNvevZ9X+DAoP9/NJnyqhioS1m0HLfY8Mk/XuDgN6pPaS8YEJHy55Z9x5t',
  'pGEWU40N63hS2b6F8HTmCM15W+hwUWZWZ5AuJ2ySH4uAa9lxRjLf9gC6HNij21O2oIbPzZe/l/OA6KQOzNIopMiog8D9r33w',
  'YSLNEoAGss360qSxPRtdbHlrgFcgCF+BnMOm7sYxGmPL4zA2dAU7sMP0kKp3vWD8vtv8RBEGipz08bTVFay5O+6S+1UVSC1E',
  'mRcRBS2L88V1G90VLU0cSr9c1UZ47vC20mLUWnigY13vNAqYFyqs5Ib7iXEWyHw0lYCGnw56rA7UXTXmrj1NoLrgqEbSGVcS',
  'iXSDYFnMoQnpmNJYhp+s1yvRpDhwP8lLkf+Dd1QjzAZ7YwajRifdz7Z/ZFUpLL8IGjvITBex1ULkHz1qc3fuyiDKul8dnkqT',
  'jpOGYogq9T5UfrR7coLunLI4Z/sqNbKN6Z5hmk8jqkPexoH59MMfMWQF+gDi7JTUizwRPDj5837eg7xAjdPdBK4LFYtHOHBe',
  'liSrULFI1EXZjdruGQaMdjut1iTdmwlXh/io1M+kF8nlTKXXCoDl1qn20woDjR28Xp/PTM0hH0zUdIfMhHBlK3ZHwyAAaWcf',
  'hMjU39LGPzsp7Nn0AEHgc6X7ChfHd88J9GgQcQBSWJDPecyduVXCzHGCFI1AZu60gawf4pPVmb/G8UzYSEBVMKIXJ9s4ywAv',
  'uK2gDlpQanzKnPHSBv3AO6bZCBHw5IUc/UQuRoi9MEqQj0oWbR2mY55KnOwVdj4umlmOTgQyh/7F3UQnGtPNukDv8eGFPyn9',
  '91SVMOGIwSjRK+5Z5o70fJqU3T6M9Xi5grt0+DAZWM7BOhSOMDLW5+NqUjY8H68B8YiZsbw/jKHcRObDyyeawZb1YA8Vp7fl',
  'KasQOl74wLm8srgS2xGl3nQV1Ej2tvDn699mF5HWD1YRG0lbNGStIZNrn867JcmVyrEN2QC+7DS4RofCae87+z1dUU9A7qdC',
  '5lgpswRrCvoMtKWjESpREo/3Gg/iwubcR/Dnheq6cquz9OCT23Ogk1ntIWdlaQ9W4PIYuNJQiLgwaGnBPsNTLIyXT3ODclVz',
  'HkFCGMc6E/uvvSNQZE7qz+XRkp75CJj626xsJH1ipYPfRfdGt0q/OYlLw5bOXadya4u6jDKOt4OrnrR8gfURTwZuqS8/MmVk',
  '1oZhm6JyVaLIClN7Dv7+vYYT/QFFh3WFvQZ0LOlfXzanmPxBlulS5yxIETgjtzcE0X87Ufyjp6D3WhWGLKUExYLvhRM95kjE',
  'mphNc9vnIvujq2ZYDV/a9cE+YNDS4Ou6zJY/7hC30bMxjfkFB5kmqP+7z+mU5cYf/fF3Rkl/cFKf1WHx/Q+b0/626ovt76Yz',
  'x8q6bnxTgsj+ZKUu6WuPwPm9aQobaGN7Pf3OeqPGc7CcFmGmUSE+LQa+oQymXAhOwxv6D+VpjbhIbklPz/MKYvPi+JPew/Em',
  'Wonbo8PvzPqYbdtcazp2t/iWKUZadeAcvolSM4YJFGX2u7OX8RNYI+4rpsBni1l/dGqgfe1YLiyU20g4QLcX76jCpE60Vxzc',
  'uhIaRlDk3euS801iYWzkE+iWoNflHhVmd7AguvnIHReRXiSG7zLNYArOFHTcHRIutbWtqKr/gLgNgZmSEyRWuuMjGRLVv2Dm',
  'EOH/9pftbGmN9e+rxZecj8qNP/oe9GPBsXNrlrb9g7O9MI/4prF8st3QRnxkvOSgrHyz9tBd296KoiwNvvYO5GvN8HpCOqlr',
  'rUq3ES6zkp2GwWyY0slTxtidZNV6YHdE6HHHvwd7qLeHYl8FbHxKixFHHNdkrUlyqTr2xsebXS3VmOQNPdibz9OJtHh5gjR5',
  'Sv8dEI1OwsOENhDLS/Fgy87fcipYUTm6pUOU/h7tuP7Cl0607mWIKM6Uej2mqSc+cz0iYin+6jKBHMxmiCm4hwgGNX1aP1Jf',
  'oWP/gCo0JqjKB8LcsM8m98m8/2A0wTBS/Imzk90C8LX8LD84QfF8Z7usIHjUQ6zinZungyk27cDVS5RLhKpMDcUCkWPzhKkx',
  'Cp55XmXU3xH2QzW88GXTfU1GF7X/ShbVmeoBlhY/pC5QS87Rv45ORcBkgfubz4055F7Chi9x4dbwfaJ6gsNwiF12cye7TlpM',
  'lk6FjJG6JlU6agf41RD4b7viJu+2KK/qiQSJ9wpVNovq2rCro7Lb5StFrHTM6oQuksiua0ZPyW87C4vJABKSnbd62gYX47vL',
  'Cc5uu0AXN0TlWZCHndyqvcxCCmoQHQUVj1f6VMKp6rafqUaCShIjLbMt+OnzVGVkR5OYItyWq/nf+XckcCl+vVl4fiuTvFb3',
  'i/vqdsYZ7zZX607bPFW2Wq765RR3oGsD7eYikgtrI/HauZ5ZlYiFxOlfqzaOReztiLQC9/11U5sR28sCGOu0FKrhA7X80qiB',
  '1lK9wp8moRnVmUSjfAdSokvnbTNG8ElfhX/K5i2Ek6VvcKRADFYt26bfvZ+45biOy0zNUA9ruVLQl60Hpx8msn4gAKQTRqen',
  'gl7MJMhzeC+O1ABmjAwoyKL2fy36kFY7cokAgC8PMvrLtB75eTRryk8rQKA60v+5/qEmt9eBhrzi9hDISYe/qJ8kuDLmsPQ2',
  'DdnKfS3018nG7eY/oF0xQ5FQPRx5cg27+Klfz4h0fZR1pExjl86RKptp2+G1SM58yYavvj7hGrrCRFLaIpsCG/voW63OmWFo',
  '8tVnkKtBwqL64nKZQj+5w5fFYLprCRml3M2Hn8ln1Bq9trjpBctgD1QA6Ye7wckg7SRnI0c+OBMpASPpqrI7aJQ2wHYMhuML',
  '+aC2cgqvZSG5RHCTj6ibzvgI5A6NWz5p55WMuHOSwsK2Cx0SMLIOBJC9d/NIO7m5scbyK15vSMK07NXwGkqoKB44rrY2Cxrz',
  '4igLbCDdUjIlxtpjw43hsI1ZByOUilNfV5xIflo4rQ6wr0jseazoNy2DWp3wxthR3NsbJ5gYIkT45DFFbPiOZYoI8Pi/DxVr',
  'G46ey2QbWP+siy027tLaxeJyRn49Ii8/1634hKqHkXdbDtgdzGq7D4bMu1LqlLrqmOlHEp/CtOmof+onpTnppT8jmNdHs2Ik',
  '0p/ksY6IZA6O7H8NGaA6rYOj7u75FT6JGVPPaDAEJKykjOqqt1qOK1+ow0I8BS3XzbAlVWUxMbY3kvQSywZ5TYCOF1VfPr8R',
  '4rvYi77kC9CgsZ0qtw5u1ltqzq6unQ7EyN4EdWTSCovyRYJaWkRSdfsVhZK+Bo0u7tbi8PDVZxKc7XN7tsQYPVVGTdaWhWBr',
  'xCjQWqR1Hkyql+FMPCa4hvUzBHFNkmXf1T3Zn0swZqiZP+LG0Ht/q+VGqAOO/kApv4/beISaX5bemFIEcr3QM+9z0lalwPd8',
  'lj5mhY9tRECVqGN2J5iard3nABN5pEqouxJ8U7F+wVlVYMAYWA1dUunXG2id3nGvqrjwHm4QtKaSJnEhYqsHDcqzlhMEynDo',
  'trANabtVyNE9YHuXxf0NIuRcEMQqKzsFjLiafbd8UGqOuYp6mlsE43fzYI6SrbJCsmftGUDxxhxV8DiyN1ke098B6F+RLjej',
  'a2xG3sUvZoiLYTE7urzixiMjrEs7PaAVrjl9iqlsG3er7JdeCg0IGtnH3O1TxyJVlue9NYyQSiGIHOoUVFx1dX5Q1kF32i5U',
  'qiQkmWlzktLd5QvR1dC56dStLb/D0HeHlV5OxktE6GSE7DyX2mJKtL1a8TvvCxE+pidLvdD63WHssa2K6s3Vjs+xHq1FOZS6',
  'Z94Y7aWBSvKBzrMsS0P89IDqz5SHcM7XokJf914U/DGhJYN5qU0CjcrS9/U1mjs+CW7kWBOgQzD9h7XygwDKDYvKnW4YiFP8',
  'nnTRt5Hgfkh3XqJkz1U0fsYSBiV2WJ3alTZK/gMqgZ73loeu0+7FUTqD3b2D9SIFmr4UzUR1O1LEkmqWcnk1Q8FtmgCVkoon',
  'dbcFPA8XgpTxyQCAuvcssVMkxosS3WM5lx2gUHTae+7T9vwW68peBLzlCGSSERrqiPS7HKa89YXsHkp9tpVhpSsx6ePQbDLm',
  'k5LujpIdXQc6/zIuYkOf0Lh3qjI2pLRJCb7+ufrUh8PmlZS+xE3hW0wuvmh5iam0kB189zqwrNkPnTcBS/YKEbQk3DUJXNgP',
  'U4SEwZ7zjJXhLhNCS7QOEyhlpfIGsG+6jLzMCW9QiMv5P4e3RC5F1K/r/wvLJKr+949ppRU510nb5v7Ove3VvrVzRA5aiE0c',
  'iXBfQTa0pZcxaAqI+JUwMavMdxGEYc78/cINKza6fD7Wv5TV5XpCvD0ykHYEaRtNhje9Ba9sabWmP5pJwsGxEKfFrEcbR4Qj',
  'D8+A3DNyHVTRtxdY4hllK9PDYRNATqSpgxJul41P3ztkWhysCDEm6qPXCj1wo9cKPXCj1wo9cKTMzMzMzMzMzMzMzMzMzMzN',
  'gAAAAAAAAAAAAAAAAAAAAKAAAAAAAAAAAAAAAAAAAADIAAAAAAAAAAAAAAAAAAAA+gAAAAAAAAAAAAAAAAAAAJxAAAAAAAAA',
  'AAAAAAAAAADDUAAAAAAAAAAAAAAAAAAA9CQAAAAAAAAAAAAAAAAAAJiWgAAAAAAAAAAAAAAAAAC+vCAAAAAAAAAAAAAAAAAA',
  '7msoAAAAAAAAAAAAAAAAAJUC+QAAAAAAAAAAAAAAAAC6Q7dAAAAAAAAAAAAAAAAA6NSlEAAAAAAAAAAAAAAAAJGE5yoAAAAA',
  'AAAAAAAAAAC15iD0gAAAAAAAAAAAAAAA41+pMaAAAAAAAAAAAAAAAI4byb8EAAAAAAAAAAAAAACxorwuxQAAAAAAAAAAAAAA',
  '3gtrOnZAAAAAAAAAAAAAAIrHIwSJ6AAAAAAAAAAAAACteOvFrGIAAAAAAAAAAAAA2Ncmtxd6gAAAAAAAAAAAAIeGeDJurJAA',
  'AAAAAAAAAACpaBY/Cle0AAAAAAAAAAAA08IbzsztoQAAAAAAAAAAAIRZUWFAFISgAAAAAAAAAAClb6W5kBmlyAAAAAAAAAAA',
  'zsuPJ/QgDzoAAAAAAAAAAIE/OXj4lAmEQAAAAAAAAAChjwfXNrkL5VAAAAAAAAAAyfLJzQRnTt6kAAAAAAAAAPxvfEBFgSKW',
  'TQAAAAAAAACdxa2oK3C1nfAgAAAAAAAAxTcZEjZM4wVsKAAAAAAAAPaE31bD4BvGxzIAAAAAAACaEwuWOmwRXDx/QAAAAAAA',
  'wJfOe8kHFbNLnxAAAAAAAPC9whq7SNsgHobUAAAAAACWdplQtQ2I9BMURIAAAAAAvBQ/pOJQ6zEX2VWgAAAAAOsZT44a5SX9',
  'Xc+rCAAAAACS79G40M83vlqhyuUAAAAAt6vGJwUDBa3xSj2eQAAAAOWWt7DGQ8cZbZzNBdAAAACPfjLOe+pcb+SCACOiAAAA',
  's12/ghrk84vdooAsioAAAOA1L2KhnjBu1QsgN60gAACMIT2dpQLeRUUm9CLMNAAArymNBQ5DldaWcLErf0EAANrz8EZR1HtM',
  'PAzddl8RQACI2HYr8yTND6WICmn7asgAqw6Ttu/uAFOO6g0EekV6ANXSOKSr6YBocqSQRZjW2ICFo2Nm63HwQUem2it/hkdQ',
  'pww8QKZObFGZkJC2X2fZJNDPS1DP4gdl//S04/dBz22CgY8Sge1En7/48Q56iSGkoyHy1yJolcev9y1SGStqDcvqb4zrArs5',
  'm/T4pp92RJD+5QtwJcNqCALyNtBHU9W0n08nJheaIkUB12JCLJRlkMci8O+dgKrWQk060re5fvX4660rhODVi9LgiYdlp96y',
  'm5NMOzMMhXdjzFX0n4jrL8J4H0n/z6bVPL9rccdrJfvzFiccf8OQiovvRk45Re96l+3Ycc/aOlaXdYvw48u1rL3pTo5D0Mjs',
  'PVLu7Ry+oxftY6Ix1MT7J0ynqqhj7kvdlF5FXyT7HPiP6MqpPnTvarl11rbuOeQ2s+L9U44SK0Tn00xkqchdRGDbvKhxlrYW',
  'kOQPvuodOkq8iVXpRv4xzbUdE66kpIjda6urY5i9vkHiZFiaTc2rFMaWljx+7S3RjX63YHCgiuz8Hh3lz1Q8orDeZTiMyK2o',
  'OyWlX0MpS8vdFf6Gr/rZEknvDrcT856+ii2/FC38x6tuNWkybHhDN6y5Ltk5e/mWScLDfweWVATX53qPh9r3+9wzdF7Je+kG',
  'hvCsmbTo2v1poCi7Pe1xo6is18AiIxG8xAgy6g1ozgzS2A2wKqvWK/UKP6SQwwGQg8cIjhqrZdt5JmfG2nng+qS4yrGhVj9S',
  'V3ABuJEYWTjN5v1eCavPJu1MAia1Xm+GgLBeWsYLYXhUT4FYMVsFtKDcdfF3jjnWaWNhrj2xxyHJE5Nt1XHITAO8OhnNHjjp',
  '+1h4SUrOOl8Eq0igQGXHI50XSy3OwOR7YusNZCg/nHbEXR35QnEdmjul0L0yT4OU9XRld5MNZQDKj0TsfuNkeZlov2q76F8g',
  'fpmLE89OHsu/wu9FauJ26J4/7djDIaZ+77OrFsWbFKLFz+lO8+oQHpXQSu47gOzlu6Hx0VhyShK7RF2pymEoHyqKbkWujtyX',
  '6hV1FDz5cib1LQnXGjKTvZJNaSymG+dYWTwmJnBfnFa24MN3z6LhLm+LL7AMd4Ns5Jj0VcOLmXoLbfucD5VkR47fmLWaNz/s',
  'RyS9QYm9Xqyyl37jAMUP51jt7JHsLLZX3z1em8D2U+EvKWe2Zzfj7YuGWyFYmfRsvXng0gCC7nSuZ/HprsBxh+zYWQaAo6oR',
  '2gHuZBpwjenoDm9IIMyUlYhBNP6QhliyMQkFjRR/3N2qUYI+NKfu3r1LRvBZn9QV1OXizcHR6pZsnhiscAfJGoUPrcCZIzKe',
  'A+LPa8YE3bCmU5kwv2v/RYTbg0a3hhUcz+h/fO9G/xbmEmQYZWeaY4HxT64VjF9uT8t+jz9gwH6ibaOZmu93SeO+XjMPOPCd',
  'ywkMgAGrVRxcrfW/0wcsxf3LT6ACFipjc9lzL8fI9/aenxHEAU3afihn5/3c3Zr6xkbWNQGhUR2ygeH9VBUBuPfYi8JCCaVl',
  'HyJafKkaQiaa51dZaUYHXzN1eI3psGlYwaEtL8OXiTcAUtaxZByDrvIJeHu0fWuEwGeMXb0jpJqXRetNUM5jMvhAt7qWNkbg',
  'vRdmIKUB+/+2UOWpO8PYmOxdP6jOQnr/o+UfE4q0zr6TukfJgOmM38ZvM2w2sQE3uKjZu+Ej8Be4CwBHRF1BhObTECrZbOwd',
  'pg3AWRV0keWQQ+oax+QTkofImDetaNsvtFTkoXndGHcpur5FmMMR++FqHcnYVF6U9Clt1v7z1nqM4lKeJzS7HRiZ5KZfWGYM',
  'sBrnRbEB6eRewF3P9y5/j9whoRcdQmRddnB1Q/T6H3OJlQSuckl+umoGSUp5HFOoq/pF2g7b3mkEh9udF2Noktb411CSktYD',
  'RanShF08QraGW4aSW5vFwguKI5K6Ramyp/JoNvKCtzKObKx3aNcUHtHvAkSvI2T/MgfXlUMM2SaDNWFq7XYfH39E5r1J6Ae4',
  'pAK5xajTpudfFiBsnGIJps0DaDcTCJChNtuoh8N6jA+AIiEia+VaZMJJSVTaLJeJoCqpawbesP3y25uqELe9bMg1U8XIll09',
  'b5KClJTlrMf6Qqi3Orv0jMt3Izm6Hxf5nGmpcoS1eNf/KnYEFFNu+8OEE88l4tcN/vUThRloSrr0ZRjC71uM0X6yWGZfwl1p',
  'mL8vedWZOALvL3c/+9l6Yb7u+1hK/4YDqvtVD/rP2PruqrouXb9nhJW6KlP5g884lSq0XPqXoLLdlFp0e/Jhg7p1YXQ5PYjf',
  'lPlxEZru+eTpErnRR4zrF3o3zVYBqrhdkau0Isy4Eu6sYuBVwQqzOrYWoSt/5heqV3uYazFNYAnjnEl2X9+dlO1afoX9oLgL',
  'jkGt6fvrwn0UWI8TvoRzB7HSGWR65rMcWW6y2K4lj8jeRp+9maBf42/KX47ZrvO7iuwj1oAEO+4l3nu5SA1YVK2nLMwgBUrp',
  'r1Yap5oQrmrZEPf/KAadpBsroVGAlNoEh6qa/3kEIoaQ+0TS8F0IQqmVQb9XRSsoNToWB6x0SlPT+pIvLRZ18kKIm4mXkVzo',
  'hHybXXwuCbdplWE1/rraEaWbwjTbOYwlQ/q5g35pkJXPArLCEgfvLpT5Z+ReA/S7gWGvuUtE9X0dG+DuusJ49aG6G6eeFjLc',
  'ZGLZKmlzFzLKKKKRhZu/k317j3UDz9z+/LLLNecCr3hc2nNSRMPUPp3vvwGwYa2rOgiIE2r6ZKfFa67CHHoZFgiKqhhFuP3Q',
  '9saacqOYn1uKrVSeVyc9RZo8IIemP2OZNqxU4vZ4hkvAyyipj888f4RXahu0Fqfd8P3y0/PDC59lbUSioRxR1Zaet8R4WedD',
  'n2RK5aSxsyW8RmW1lnBhFIc9XZ8N3h/u61f/IvwMeVmpDLUG0VWn6pMW/3Xdh8vYCafxJELViPK33L9TVOm+zgwR7W1Tiusv',
  '5dPvKCokLoGPFmjIqG2l+o+kdXkaVp0Q+W4BfWlEh7yzjZLXYOxEVTfJgdzDlams4HD3jTknVWqFu+JT9HsUF4xGmrhDuJVi',
  'k5VtdHjM7I6vWEFmVKa6uzh6yNGXACey2y5Rv+nQaWoGmXsF/MAxnoj88xfyIkHiRB/s4734HwOrPC/d7qrSWtUn6BytdibD',
  '1gs71WpVhvGKceIj2NOwdIXHBWVidXRW9octVmeETkmnOMa+uxLRbLQo+KwBZWHb0Qb4bmnXhcfhMzbXAb66UoKkW0UCJrOc',
  '7MACRmEXNHOjTXIWQrBghCfwAtf5XQGQzCDOm9NceKUx7AON97RB9P8pAkLIM5bOfmcEcXWhUnGfeaFpvSA+QQ8AYsbphNOG',
  'x1gJxCxoTdFSwHt4o+YIaPkuDDU3gmFFp3CaVszfioKbvMehQrF8y4imYHZAC7aRwqv5iZNd2/5qz/iT0A6kNfNW9+v4NVL+',
  'BYP2uMQSTUOYFlrzeyFT3sNyejN6i3BKvhvxsFnpqNZ0TxjAWS5MXO2i7hxwZBMMEWLe8G9533OUhdTRxj6L54rdy1ZFrCuo',
  'uadKBjfOLuFtlT4r1xc2kugRHIfFwbqZyPqNtszdBDeRCrHU25kUoB2cmJJACiKitU1eShJ/WcglA7620AyrS+KgtdyXHzA6',
  'LkSuZIQP1h2NpHGp3nN+JFzq7P7SieXSsQ2OFFYQXa10Jag+hyxfR91Q8ZlrlHUY0S8STij3dxmKUpb/4zzJL4K9a3DZmqpv',
  'rOc8v9wL+3tjbMZNEAFVC9ghC+/TDvpaPEf34FQBqk6HFKd14+lceGWs+uw0gQpxqNnRU1zjs5Z/GDmnQaFNDdMQRag0HKB8',
  'Ht5IERIJoFCD6iuJIJHkTZNK7QqrRgQypOS2a2i2XWD4HahNVheFP84d5AZC4/S5NiUSYKudZo6A0q6D6c5488HXK3xrQmAZ',
  'oQdaJORCFzCyTPZbhhL4H8lJMK4dUpz83uAz8meXtif7m3zZpKdEPBaYQO8BfaOxnUEuCAboiqWOHyiVYO6GTsSReYoIoq1O',
  '8abyurkqJ+L1tdfsistYoq4Qr2lndLHbmZGm89a/F2Wsym2h4KjvKb/2ELDMbt0/F/0JCljTKvPv85Tc/4qUjt38S0zvB/Ww',
  'lfg9Ch+2nNlKva8QFWT5jrt2TEynpEQPnW0a1Bq+N/HqU99f0Y1VE4TIYYkhbcXtknRrm+L4VSwy/Tz1tOSbtLcRhoLbtmp3',
  'P7yMMyIdwqHk1egjkqQFFQ+rrz/qpTNKjwWxFjumgy0py02H8qdADrLHHVvKkCP4dD4g6e9REBLfeOSyvTQs9pFNqSRrJVQW',
  'i6uO77ZAnBoa0Im2wvdUjq6Wcquj0MMgoYSsJHO1KbHaPA9WjMTz6Mnl1y2QonQeiGWJlhf7GHF+L6Z8emWIkqp+6/ud+d6N',
  '3buQG5j+6rfVHqb6hXhWMVUqdCJ/PqVlhTMoXJNrNd7VOoiVj4cnX6Z/8nO4RgNWiokquvNo8TfQH+8QpleELC0rdWmwQy2F',
  'ghP1amf2spucOyliDin8c6KY8sUB9F9Cg0nzupG0e4/LPy92QnF3EyQccKk2IZpz/g77U9MN1NftI4zTg6oBEJ7JXRRj6KUG',
  '9DY4BDJKQKrGe7RZfOLOSLFDxgU+3NDV+Bqhb9wbgdrdlLeGjpQFCpsQpOXpkTEoynzytBkcgybB1M4fY/V9cv0cL2EfY6Pw',
  '8koBpzzy3M+8Yzs5ZzyM7JduQQiGF8oB1b4FA+CF2BO9SdFKp528gksthkTYp04Y7JxFnVGFK6Ld+OfWDtEhnpPhq4JS8ztF',
  'yruQ5clCtQO42hZi57AKFz1qdR87k2JD5xCb+6GcDJ0MxRJnCng61JBqYX1FAYfiJ/srgGaLJMW0hPnclkHp2rH59mCALe32',
  '4aY4U7vSZFFeeHP4oDlpc40H4zRVY36y2wtIe2Qj4eiwSdwBarxeX5HOGpo9LNpi3FxTAcVrdfd2QaFAzHgQ+4m5s+EbYym6',
  'qekEyH/LCp2sKCDZYjv0KVRjRfqfvc1E1zIpD7rK8TOpfBd5R61AlYZ/WanUvtbASe2Oq8zMSF2oHzAUSe6McFxo8la//1p0',
  '0ib8GVxqL4xzgy7sb/8xEYNYXY/Zwl23yDH9U8X/fqukLnTz0DL1Jbo+fKi3f15VzToSMMQ/sm8ozhvS5V8164BES156p8+F',
  'eYDRY89bgbOgVV42GVHDZtfhBbzDMmIfyGq1w5+mNECN2Ucr8/76p/qFYzSHj8FQsU+Y9vD+uVGck14A1LnY0m7Rv5pWnzPT',
  'w7g1gQnoTwcKhi+A7EcAyPSmQuFMYmLIzSe7YSdYwPqY5+nMz719vYA41Ry4l3icvyHkQAOs3SzgRwpj5r1Ww+7qXVAEmBR4',
  'GFjM/OBsrHSVUnpSAt8Myw83gB4MQ+vIuqcY5oOWz/3TBWAlj1TmuulQ3yAkfIP9R8a4LvMqIGmR0ot0Fs3SfkzcMx1X+lRB',
  'tkcuURyBRx3gEz/krfjpUuPY+eVjoZjlWBgP3dl3I6aOZ5wvXkT/j1cPCeqn6nZI',
].join('');

const DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** The table, decoded from {@link FIVES}: words at 4 (q - SMALLEST_Q) .. 4 (q - SMALLEST_Q) + 3. */
export function powersOfFive(): Uint32Array {
  const value = new Uint8Array(128);
  for (let i = 0; i < DIGITS.length; i++) value[DIGITS.charCodeAt(i)] = i;
  // Four characters are three bytes; the text has no padding (its bytes are a multiple of three).
  const bytes = new Uint8Array((FIVES.length / 4) * 3);
  for (let i = 0, b = 0; i < FIVES.length; i += 4, b += 3) {
    const n = (value[FIVES.charCodeAt(i)]! << 18) | (value[FIVES.charCodeAt(i + 1)]! << 12) | (value[FIVES.charCodeAt(i + 2)]! << 6) | value[FIVES.charCodeAt(i + 3)]!;
    bytes[b] = n >>> 16;
    bytes[b + 1] = (n >>> 8) & 0xff;
    bytes[b + 2] = n & 0xff;
  }
  const table = new Uint32Array((LARGEST_Q - SMALLEST_Q + 1) * 4);
  for (let w = 0; w < table.length; w++) table[w] = ((bytes[4 * w]! << 24) | (bytes[4 * w + 1]! << 16) | (bytes[4 * w + 2]! << 8) | bytes[4 * w + 3]!) >>> 0;
  return table;
}
